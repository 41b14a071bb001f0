"""The Python API behind `import stratune` (which only re-exports it)."""
