"""Every internal link and anchor of the built book leads somewhere: for each page, every relative
`href`/`src` names a file of the book, and a `#fragment` names an `id` on that page. Links to
other sites are not followed (CI must not depend on them). Usage: links.py BOOK_DIR"""

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        for key in ("href", "src"):
            if attrs.get(key):
                self.links.append(attrs[key])


def main(book):
    book = Path(book).resolve()
    pages = {}
    for path in book.rglob("*.html"):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[path] = page
    if len(pages) < 10:
        print(f"docs: {len(pages)} pages in {book}: the book was not built there")
        sys.exit(1)
    broken = []
    for path, page in sorted(pages.items()):
        # print.html repeats every page; 404.html is mdBook's own.
        if path.name in ("print.html", "404.html"):
            continue
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("javascript:"):
                continue
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{path.relative_to(book)}: {link}"
            if not target.exists():
                broken.append(f"{where} (no such file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages.get(target)
                if ids is not None and unquote(parts.fragment) not in ids.ids:
                    broken.append(f"{where} (no such anchor)")
    if broken:
        print("docs: broken links:\n  " + "\n  ".join(broken))
        sys.exit(1)
    print(f"docs: {len(pages)} pages, every internal link and anchor resolves")


if __name__ == "__main__":
    main(sys.argv[1])
