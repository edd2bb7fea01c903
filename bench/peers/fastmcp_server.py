"""Benchmark peer: the coffee tools on FastMCP, stateless JSON, served by uvicorn.

The menu is read once at start from BENCH_MENU (the same examples/coffee/menu.xlsx).
Run: uvicorn fastmcp_server:app --workers 2 --loop uvloop --http httptools (the script does).
"""

import os

import openpyxl
from fastmcp import FastMCP


def load_menu(path):
    sheet = openpyxl.load_workbook(path, read_only=True).worksheets[0]
    rows = list(sheet.iter_rows(values_only=True))
    header = [str(h).strip().lower() for h in rows[0]]
    column = {name: header.index(name) for name in ("напиток", "цена", "время_приготовления_мин", "состав")}
    drinks = []
    for row in rows[1:]:
        if not row[column["напиток"]]:
            continue
        drinks.append({
            "drink": str(row[column["напиток"]]),
            "price": float(row[column["цена"]]),
            "minutes": int(row[column["время_приготовления_мин"]]),
            "composition": str(row[column["состав"]] or ""),
        })
    return drinks


DRINKS = load_menu(os.environ.get("BENCH_MENU", "examples/coffee/menu.xlsx"))
FOLDED = [(d, (d["drink"] + " " + d["composition"]).lower().replace("ё", "е")) for d in DRINKS]

mcp = FastMCP("coffee-fastmcp")


@mcp.tool
def get_menu() -> dict:
    """The whole menu."""
    return {"results": DRINKS}


@mcp.tool
def search_menu(query: str) -> dict:
    """Drinks whose name or composition contain a keyword."""
    wanted = query.lower().replace("ё", "е")
    return {"results": [d for d, text in FOLDED if wanted in text]}


app = mcp.http_app(path="/mcp", stateless_http=True, json_response=True)
