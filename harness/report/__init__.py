"""Reports over stored runs."""
