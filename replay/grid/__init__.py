"""`stratune grid`: many runs from one grid file, on one machine or on a Ray cluster."""

__all__ = ["cells", "cli", "driver", "execute", "grid_file", "limits", "live", "local",
           "ray_actors", "ray_connect", "ray_credentials", "ray_executor", "run", "ship", "spec"]
