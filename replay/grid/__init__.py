"""`stratune grid`: many runs from one grid file, on one machine or on a Ray cluster."""
