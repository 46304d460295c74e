"""Result files: JSON results of a session (more formats build on them)."""
