"""The `stratune` command line: the parser, each command's handler, argument types and help examples."""

__all__ = ["app", "arg_types", "demo", "error_lines", "help_examples"]
