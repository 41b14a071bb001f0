"""Our own short initial skills, used when the data dir has no initial_skills/."""

__all__: list[str] = []  # data files only, no modules
