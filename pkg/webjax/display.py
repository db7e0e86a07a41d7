"""webjax.display: plot, scatter, imshow, table and the profiler's timeline, drawn on a canvas
without matplotlib.

In the REPL and on pages running Pyodide the picture is drawn at once; natively the returned
Figure/Table carries it as SVG/HTML (`to_svg()`, `save(path)`, `to_html()`; Jupyter shows it as
a cell's value). Not part of JAX's API.
"""

from webjax._src.display import Figure, Table, imshow, plot, scatter, table, timeline

__all__ = ["Figure", "Table", "imshow", "plot", "scatter", "table", "timeline"]
