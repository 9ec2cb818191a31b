"""What people read: markdown comments, HTML pages and text tables (never jax)."""
