"""Model specs as the shell resolves them: backends, access checks, context fit, secrets, local models."""

__all__ = ["extensions", "llama_build", "llama_wheel", "local_model", "prompt_fit", "redact", "specs"]
