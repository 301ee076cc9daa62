"""Shape tables: JSON files with an "about" note and one list of shapes per section, built in (shapes/*.json,
shipped in the package) or given as a path."""

import json
from pathlib import Path

BUILT_IN_DIR = Path(__file__).resolve().parent / "shapes"

# The section of a table each operation reads, and the keys each of its entries must have.
SECTION_OF = {
    "gemm": "normal",
    "contiguous": "m_grouped_contiguous",
    "masked": "m_grouped_masked",
    "per_token": "quantize",
    "per_block": "quantize",
}
KEYS_OF = {
    "normal": ("m", "n", "k"),
    "m_grouped_contiguous": ("groups", "m_per_group", "n", "k"),
    "m_grouped_masked": ("groups", "m_per_group", "n", "k"),
    "quantize": ("m", "k"),
}


def built_in_tables():
    """The names of the built-in tables (the files of shapes/ without their extension)."""
    return sorted(path.stem for path in BUILT_IN_DIR.glob("*.json"))


def table_path(name_or_path):
    """The file of a built-in table's name, or the path given."""
    if name_or_path in built_in_tables():
        return BUILT_IN_DIR / f"{name_or_path}.json"
    path = Path(name_or_path)
    if not path.is_file():
        raise ValueError(f"--table: expected a built-in table ({', '.join(built_in_tables())}) or a JSON file, "
                         f"got '{name_or_path}'")
    return path


def load_table(name_or_path):
    """The table as a dict of section name to list of entries (and its "about" note, if any)."""
    path = table_path(name_or_path)
    try:
        table = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"--table: {path} is not valid JSON: {error}") from None
    if not isinstance(table, dict):
        raise ValueError(f"--table: {path} must hold a JSON object of sections, got {type(table).__name__}")
    return table


def section_entries(table, operation, precision, table_name):
    """The shapes `operation` reads from `table`: its section prefixed with the precision (as in
    precision_anchors.json: "fp8_normal") if the table has one, else the plain section; of a precision-prefixed
    section only the entries fgemm computes (NT layout, BF16 out, no accumulation, A per 1x128 and B per
    128x128). None if the table has neither section."""
    section = SECTION_OF[operation]
    prefixed = f"{precision}_{section}"
    if prefixed in table:
        entries = [entry for entry in table[prefixed]
                   if entry.get("layout", "NT") == "NT" and entry.get("out", "bf16") == "bf16"
                   and not entry.get("accumulate", False) and entry.get("recipe", "1D2D") == "1D2D"]
    elif section in table:
        entries = table[section]
    else:
        return None
    for index, entry in enumerate(entries):
        missing = [key for key in KEYS_OF[section] if not isinstance(entry.get(key), int)]
        if missing:
            raise ValueError(f"--table {table_name}: entry {index} of '{section}' needs integer "
                             f"{', '.join(missing)}, got {entry}")
    return entries
