"""Tables, plots, the HTML report and LaTeX export."""
