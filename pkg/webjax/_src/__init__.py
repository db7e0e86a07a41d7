"""webjax internals. Public modules re-export from here; nothing else should import it."""
