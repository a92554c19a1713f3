"""The core: the plain data every stage shares (the transcript's records, exact JSON
comparison); it imports nothing of the harness."""
