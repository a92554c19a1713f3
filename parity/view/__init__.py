"""Views: a transcript -> the normalized, snapshot-ready view of one run."""
