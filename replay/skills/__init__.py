"""Agent Skills folders: reading, writing, and learning them as parts."""

__all__ = ["agent_skill", "skill_parts"]
