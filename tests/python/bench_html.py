"""Reads back what the benchmark report's HTML shows: its chart sections and the cells of its tables."""

from html.parser import HTMLParser


class ReportReader(HTMLParser):
    """Collects the number of <svg> elements in each <section class="chart">, the text of every table cell
    that names its JSON value (data-key), by table (data-operation) and row (data-row), and the page's text."""

    def __init__(self, text):
        super().__init__()
        self.charts_per_section, self.cells, self.text = [], {}, []
        self._table = self._row = self._key = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section" and attrs.get("class") == "chart":
            self.charts_per_section.append(0)
        elif tag == "svg" and self.charts_per_section:
            self.charts_per_section[-1] += 1
        elif tag == "table" and "data-operation" in attrs:
            self._table = attrs["data-operation"]
        elif tag == "tr" and self._table is not None and "data-row" in attrs:
            self._row = int(attrs["data-row"])
        elif tag == "td" and "data-key" in attrs:
            self._key = attrs["data-key"]

    def handle_endtag(self, tag):
        if tag == "td":
            self._key = None
        elif tag == "table":
            self._table = self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._key is not None:
            self.cells[(self._table, self._row, self._key)] = data.strip()


def shown_value(text):
    """The number a cell shows ("87.3%" as 0.873), None for a dash."""
    if text == "—":
        return None
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)
