"""example_libraries."""
