"""Our own short initial skills, used when the data dir has no initial_skills/."""
