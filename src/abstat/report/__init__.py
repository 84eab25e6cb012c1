"""Reports across machines and configurations (``abstat report``)."""
