"""pytest plugin: collects scenarios as test items (being built; see issue 3)."""
