#!/usr/bin/env python3
"""Deterministic sample data for the TYPO3 content feed (docs/contracts/typo3-content-feed.md), and,
consistent with it, the booking system's product export and BusPro's hotel.xml
(docs/contracts/ski-product-export.md).

Run from the repository root:

    python3 examples/ski/generate.py

It rewrites examples/ski/feed/ (manifest.json, records.json, pages/<host>/<path>/index.html),
examples/ski/export/products.json and examples/ski/buspro/hotel.xml, then validates the result and
prints a summary. Python 3.11, standard library only. Every random choice comes from a generator
seeded with SEED and the item's own key, so adding an item does not reshuffle the others; the
export draws from generators of its own, so it never changes the feed.
"""

from __future__ import annotations

import html
import json
import random
import re
import shutil
import sys
import unicodedata
from datetime import date, datetime, timedelta
from html.entities import codepoint2name
from pathlib import Path
from urllib.parse import urlsplit

SEED = 20261130
HERE = Path(__file__).resolve().parent
FEED = HERE / "feed"
GENERATED_AT = "2026-11-30T21:00:00+01:00"
CONTENT_TYPE_QUERY = "?type=1733"


def rng_for(*key: object) -> random.Random:
    """A generator of its own for one item: stable whatever else is generated."""
    return random.Random(f"{SEED}:" + ":".join(str(k) for k in key))


# --------------------------------------------------------------------------------------------
# Sites
# --------------------------------------------------------------------------------------------

SITES = [
    {"site": "ep-reisen", "title": "EP Reisen", "hosts": ["www.ep-reisen.de"]},
    {"site": "ser", "title": "SER Skireisen", "hosts": ["www.ser.de", "ser.de"]},
    {"site": "ski-boarderweek", "title": "Ski & Boarderweek", "hosts": ["www.ski-boarderweek.de"]},
    {"site": "ski-wochenenden", "title": "Ski-Wochenenden", "hosts": ["www.ski-wochenenden.de"]},
    {"site": "snowzone", "title": "Snowzone", "hosts": ["www.snowzone.de"]},
]
SITE = {s["site"]: s for s in SITES}

SITE_INFO = {
    "ep-reisen": {
        "voice": "sie",
        "company": "EP Reisen GmbH",
        "street": "Kölner Straße 88",
        "town": "51149 Köln",
        "phone": "0221 480 27-0",
        "mail": "info@ep-reisen.de",
        "ceo": "Elke Pohlmann, Jörg Pohlmann",
        "register": "Amtsgericht Köln, HRB 48 112",
        "vat": "DE 814 203 577",
        "claim": "Gruppen-, Firmen- und Silvesterreisen seit 1988",
        "nav": [("Skireisen", "/reisen/"), ("Silvester", "/silvesterreisen/"),
                ("Firmenreisen", "/firmenreisen/"), ("Service", "/service/"),
                ("Über uns", "/ueber-uns/"), ("Kontakt", "/kontakt/")],
    },
    "ser": {
        "voice": "sie",
        "company": "SER Skireisen GmbH",
        "street": "Hauptstraße 27",
        "town": "70563 Stuttgart",
        "phone": "0711 737 19-0",
        "mail": "service@ser.de",
        "ceo": "Stefan Ehrle",
        "register": "Amtsgericht Stuttgart, HRB 73 904",
        "vat": "DE 147 852 369",
        "claim": "Skireisen mit dem Bus – für Familien, Genießer und Skikurs-Neulinge",
        "nav": [("Skireisen", "/skireisen/"), ("Familienreisen", "/familienreisen/"),
                ("Skigebiete", "/skigebiete/"), ("Osterreisen", "/osterreisen/"),
                ("Service", "/service/"), ("Kontakt", "/kontakt/")],
    },
    "ski-boarderweek": {
        "voice": "du",
        "company": "Ski & Boarderweek GmbH",
        "street": "Am Mühlbach 4",
        "town": "79100 Freiburg im Breisgau",
        "phone": "0761 209 44-0",
        "mail": "crew@ski-boarderweek.de",
        "ceo": "Jonas Brenner",
        "register": "Amtsgericht Freiburg i. Br., HRB 70 815",
        "vat": "DE 293 114 806",
        "claim": "Eine Woche Schnee mit Leuten wie dir",
        "nav": [("Boarderweek", "/boarderweek/"), ("Skiopening", "/skiopening/"),
                ("Reisen", "/reisen/"), ("Unterkünfte", "/unterkuenfte/"),
                ("Blog", "/blog/"), ("FAQ", "/faq/")],
    },
    "ski-wochenenden": {
        "voice": "du",
        "company": "SER Skireisen GmbH",
        "street": "Hauptstraße 27",
        "town": "70563 Stuttgart",
        "phone": "0711 737 19-50",
        "mail": "wochenende@ski-wochenenden.de",
        "ceo": "Stefan Ehrle",
        "register": "Amtsgericht Stuttgart, HRB 73 904",
        "vat": "DE 147 852 369",
        "claim": "Drei Skitage, null Urlaubstage verschenkt",
        "nav": [("Wochenenden", "/wochenenden/"), ("Skiopening", "/skiopening/"),
                ("Zustiege", "/zustiege/"), ("Unterkünfte", "/unterkuenfte/"),
                ("Blog", "/blog/"), ("FAQ", "/faq/")],
    },
    "snowzone": {
        "voice": "du",
        "company": "Snowzone Jugendreisen GmbH",
        "street": "Leopoldstraße 150",
        "town": "80804 München",
        "phone": "089 360 48-0",
        "mail": "hallo@snowzone.de",
        "ceo": "Lena Hartmann, Timo Wagner",
        "register": "Amtsgericht München, HRB 229 410",
        "vat": "DE 301 558 920",
        "claim": "Camps und Skireisen für Jugendliche und Studierende",
        "nav": [("Camps", "/camps/"), ("Uni-Reisen", "/uni-skireisen/"),
                ("Reisen", "/reisen/"), ("Blog", "/blog/"),
                ("Teamer werden", "/teamer-werden/"), ("FAQ", "/faq/")],
    },
}


def voice(site: str | None) -> str:
    return SITE_INFO[site]["voice"] if site else "sie"


_VOICE = re.compile(r"\[\[(.*?)\|\|(.*?)\]\]", re.S)


def V(text: str, site: str | None) -> str:
    """`[[du form||Sie form]]` picks the site's form of address (du for the youth brands)."""
    du = voice(site) == "du"
    return _VOICE.sub(lambda m: m.group(1) if du else m.group(2), text)


def host(site: str) -> str:
    return SITE[site]["hosts"][0]


def site_url(site: str, path: str) -> str:
    return f"https://{host(site)}{path}"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------

def slug(text: str) -> str:
    t = text.lower()
    for a, b in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss"), ("&", " und ")):
        t = t.replace(a, b)
    t = unicodedata.normalize("NFKD", t)
    t = "".join(c for c in t if not unicodedata.combining(c))
    t = re.sub(r"[^a-z0-9]+", "-", t)
    return t.strip("-")


def num(n: int) -> str:
    """German thousands separator: 2300 -> 2.300."""
    return f"{n:,}".replace(",", ".")


def esc(text: str) -> str:
    return html.escape(text, quote=False)


def join_de(items: list[str], conj: str = "und") -> str:
    items = list(items)
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + f" {conj} " + items[-1]


def stamp(r: random.Random, start: str = "2026-06-01", end: str = "2026-11-30") -> str:
    """A working-hours time between start and end, with Europe/Berlin's offset of that day
    (CEST +02:00 until 25 October 2026, CET +01:00 after)."""
    d0 = datetime.fromisoformat(start)
    d1 = datetime.fromisoformat(end)
    day = d0 + timedelta(days=r.randrange((d1 - d0).days + 1))
    t = day.replace(hour=r.randint(7, 19), minute=r.randrange(60),
                    second=r.randrange(60) if r.random() < 0.5 else 0)
    if t >= datetime(2026, 11, 30, 20, 0):
        t = t.replace(hour=17)
    offset = "+02:00" if t < datetime(2026, 10, 25, 3, 0) else "+01:00"
    return t.strftime("%Y-%m-%dT%H:%M:%S") + offset


def ref(type_: str, uid: int) -> dict:
    return {"type": type_, "uid": uid}


# --------------------------------------------------------------------------------------------
# Geography: countries, regions, cities
# --------------------------------------------------------------------------------------------

COUNTRIES = {
    # key: uid, title, adjective genitive ("Frankreichs"), own contentUrl page on ser
    "fr": {"uid": 4001, "title": "Frankreich", "gen": "Frankreichs", "own": True},
    "at": {"uid": 4002, "title": "Österreich", "gen": "Österreichs", "own": True},
    "it": {"uid": 4003, "title": "Italien", "gen": "Italiens", "own": False},
    "ch": {"uid": 4004, "title": "Schweiz", "gen": "der Schweiz", "own": False},
    "de": {"uid": 4005, "title": "Deutschland", "gen": "Deutschlands", "own": False},
}

COUNTRY_DESC = {
    "fr": [
        "Die französischen Alpen haben die größten zusammenhängenden Skigebiete der Welt. In Savoyen "
        "liegen die 3 Vallées, das Espace Killy mit Val d'Isère und Tignes sowie Paradiski; weiter "
        "südlich, im Oisans, warten Les Deux Alpes und Alpe d'Huez.",
        "Typisch für Frankreich sind hoch gelegene Skistationen, in denen die Residenzen direkt an der "
        "Piste stehen. Die meisten Unterkünfte sind Apartments mit Selbstverpflegung; Halbpension "
        "bieten vor allem die Sportclubs und kleineren Hotels.",
    ],
    "at": [
        "Österreich ist für Gäste aus Deutschland das Skiland Nummer eins: kurze Anreise, "
        "gemütliche Hütten und Après-Ski mit Tradition. Tirol, das Salzburger Land und Vorarlberg "
        "bieten vom Familienskigebiet bis zum Gletscher alles.",
        "Viele Skiorte in Österreich liegen tiefer als in Frankreich, sind dafür aber gewachsene "
        "Dörfer mit Gasthöfen, Pensionen und Gästehäusern. Gletscher wie in Sölden oder am "
        "Kitzsteinhorn sorgen für Schnee schon ab Oktober.",
    ],
    "it": [
        "Italien verbindet Pisten mit Dolce Vita: Espresso an der Hütte, Pasta zum Mittagessen und "
        "Skigebiete wie die Dolomiten, die zum UNESCO-Welterbe gehören.",
        "Livigno ist zollfreies Gebiet, Cervinia teilt sich das Skigebiet mit Zermatt und in "
        "Madonna di Campiglio fährt der Weltcup.",
    ],
    "ch": [
        "Die Schweiz steht für hoch gelegene, schneesichere Skigebiete und autofreie Orte wie "
        "Zermatt und Saas-Fee. Laax ist das Freestyle-Zentrum der Alpen, Davos die höchstgelegene "
        "Stadt Europas.",
        "Skipässe und Verpflegung sind in der Schweiz teurer als in Österreich; wir buchen deshalb "
        "vor allem Pensionen und Ferienwohnungen. Unsere Busse fahren über Zürich.",
    ],
    "de": [
        "Skifahren in Deutschland heißt kurze Wege: Das Allgäu, das Werdenfelser Land und der "
        "Schwarzwald sind von Stuttgart, München oder Frankfurt aus in wenigen Stunden erreichbar.",
        "Die Skigebiete sind kleiner als in den Westalpen, eignen sich aber bestens für ein "
        "Ski-Wochenende oder die ersten Schwünge auf der Piste.",
    ],
}

REGIONS = {
    # key: uid, title, country, description sentence(s) (None: no description), url/page
    "3v": (4030, "Les 3 Vallées", "fr",
           "Les 3 Vallées sind mit rund 600 Pistenkilometern das größte zusammenhängende Skigebiet der "
           "Welt. Courchevel, Méribel, Les Menuires und Val Thorens sind auf Ski miteinander verbunden."),
    "killy": (4031, "Espace Killy", "fr",
              "Das Espace Killy verbindet Val d'Isère und Tignes zu 300 Pistenkilometern bis auf "
              "3.456 Meter. Der Grande-Motte-Gletscher macht es zu einem der schneesichersten Gebiete "
              "der Alpen."),
    "paradiski": (4032, "Paradiski", "fr",
                  "Paradiski umfasst La Plagne und Les Arcs, verbunden durch die Doppelstock-Kabinenbahn "
                  "Vanoise Express. Zusammen bieten sie rund 425 Pistenkilometer."),
    "oisans": (4033, "Oisans", "fr",
               "Das Oisans im Département Isère ist die Heimat von Les Deux Alpes und Alpe d'Huez – "
               "zwei Skigebieten mit Gletscher, viel Sonne und langen Abfahrten."),
    "pds": (4034, "Portes du Soleil", "fr",
            "Die Portes du Soleil verbinden zwölf Orte in Frankreich und der Schweiz zu einem Skigebiet "
            "mit rund 580 Pistenkilometern."),
    "tirol": (4040, "Tirol", "at",
              "Tirol ist das Herz des österreichischen Wintersports, mit Ischgl, St. Anton am Arlberg "
              "und Kitzbühel als bekanntesten Namen."),
    "salzburg": (4041, "Salzburger Land", "at",
                 "Im Salzburger Land liegen Zell am See mit dem Kitzsteinhorn, der Skicircus Saalbach "
                 "Hinterglemm und Ski amadé rund um Flachau."),
    "zillertal": (4042, "Zillertal", "at",
                  "Das Zillertal bietet vier große Skigebiete, den Hintertuxer Gletscher und mit "
                  "Mayrhofen einen der lebhaftesten Après-Ski-Orte Österreichs."),
    "oetztal": (4043, "Ötztal", "at",
                "Das Ötztal reicht vom Inntal bis an die Gletscher der Ötztaler Alpen. Sölden und "
                "Obergurgl gehören zu den schneesichersten Skiorten Österreichs."),
    "vorarlberg": (4044, "Vorarlberg", "at", None),
    "dolomiten": (4050, "Dolomiten", "it",
                  "Die Dolomiten sind UNESCO-Welterbe. Über den Skiverbund Dolomiti Superski sind mehr als "
                  "1.200 Pistenkilometer mit einem Skipass befahrbar, darunter die Sellaronda."),
    "lombardei": (4051, "Lombardei", "it", None),
    "aosta": (4052, "Aostatal", "it",
              "Das Aostatal ist die kleinste Region Italiens und grenzt an Frankreich und die Schweiz."),
    "trentino": (4053, "Trentino", "it",
                 "Im Trentino liegen Madonna di Campiglio und das Val di Fassa; viele Gebiete gehören "
                 "zum Dolomiti Superski."),
    "gr": (4060, "Graubünden", "ch",
           "Graubünden ist der größte Kanton der Schweiz, mit Laax, Davos, Klosters und St. Moritz."),
    "wallis": (4061, "Wallis", "ch",
               "Im Wallis stehen die meisten Viertausender der Alpen; Zermatt und Saas-Fee sind "
               "autofrei und bis in den Frühling schneesicher."),
    "allgaeu": (4070, "Allgäu", "de",
                "Das Allgäu ist die größte Skiregion Deutschlands, mit Oberstdorf, dem Kleinwalsertal "
                "und vielen kleinen Familienskigebieten."),
    "werdenfels": (4071, "Werdenfelser Land", "de",
                   "Das Werdenfelser Land rund um Garmisch-Partenkirchen liegt am Fuß der Zugspitze."),
    "schwarzwald": (4072, "Schwarzwald", "de",
                    "Der Schwarzwald ist das Mittelgebirge für Wintersport im Südwesten: Feldberg, "
                    "Todtnauberg und viele Loipen."),
}
# Regions without any page or url (documented in examples/ski/README.md).
REGIONS_NO_URL = {"aosta", "werdenfels"}
# Regions whose record carries its own contentUrl (no separate page item).
REGIONS_OWN_PAGE = {"3v", "zillertal"}

# key: uid, title, region, village altitude, top station, piste km, ski area, three sentences
CITIES = {
    "lm": (4101, "Les Menuires", "3v", 1850, 2850, 600, "Les 3 Vallées", [
        "Les Menuires liegt mitten im Belleville-Tal und ist das günstigere Tor zu den 3 Vallées.",
        "Die Ortsteile Croisette, Reberty und Bruyères sind durch Pisten und einen kostenlosen Skibus verbunden.",
        "Familien schätzen die breiten blauen Pisten am Ortsrand und die kurzen Wege zur Skischule."]),
    "vt": (4102, "Val Thorens", "3v", 2300, 3230, 600, "Les 3 Vallées", [
        "Val Thorens ist mit 2.300 Metern der höchstgelegene Skiort Europas und garantiert Schnee von Ende November bis in den Mai.",
        "Von der Cime Caron auf 3.195 Metern reicht der Blick bei klarem Wetter bis zum Mont Blanc.",
        "Die meisten Unterkünfte liegen direkt an der Piste – Ski-in/Ski-out ist hier eher die Regel als die Ausnahme."]),
    "mer": (4103, "Méribel", "3v", 1450, 2952, 600, "Les 3 Vallées", [
        "Méribel liegt im Herzen der 3 Vallées; von hier aus ist jedes der drei Täler schnell erreichbar.",
        "Das Ortsbild prägen Chalets aus Holz und Naturstein – Hochhäuser sucht man vergeblich.",
        "Im Ortsteil Mottaret auf 1.750 Metern startet man direkt von der Unterkunft auf die Piste."]),
    "cou": (4104, "Courchevel", "3v", 1850, 2738, 600, "Les 3 Vallées", [
        "Courchevel gilt als einer der elegantesten Wintersportorte der Welt und besteht aus mehreren Ortsteilen zwischen 1.300 und 1.850 Metern.",
        "Die Pisten werden außergewöhnlich sorgfältig präpariert, und der Altiport liegt mitten im Skigebiet.",
        "Auch wer kein Luxushotel bucht, fährt auf denselben 600 Pistenkilometern der 3 Vallées."]),
    "vdi": (4105, "Val d'Isère", "killy", 1850, 3456, 300, "Espace Killy", [
        "Val d'Isère ist ein gewachsenes savoyisches Bergdorf mit Steinhäusern und einer romanischen Kirche am Dorfplatz.",
        "Die Face de Bellevarde war 1992 Schauplatz der olympischen Abfahrt und ist bis heute eine der anspruchsvollsten Pisten Frankreichs.",
        "Gemeinsam mit Tignes bildet Val d'Isère das Espace Killy, benannt nach dem dreifachen Olympiasieger Jean-Claude Killy."]),
    "tig": (4106, "Tignes", "killy", 2100, 3456, 300, "Espace Killy", [
        "Tignes liegt auf 2.100 Metern rund um einen See, der im Winter zugefroren ist.",
        "Auf dem Grande-Motte-Gletscher wird fast das ganze Jahr über Ski gefahren.",
        "Die Ortsteile Tignes Le Lac, Val Claret und Le Lavachet sind durch Pisten und Busse verbunden."]),
    "lpl": (4107, "La Plagne", "paradiski", 1970, 3250, 425, "Paradiski", [
        "La Plagne besteht aus zehn Ortsteilen, von denen die meisten autofrei sind und direkt an der Piste liegen.",
        "Die Kabinenbahn Vanoise Express verbindet La Plagne in 380 Metern Höhe über dem Tal mit Les Arcs.",
        "Die olympische Bobbahn von 1992 kann im Bob-Raft auch von Gästen befahren werden."]),
    "lar": (4108, "Les Arcs", "paradiski", 1600, 3226, 425, "Paradiski", [
        "Les Arcs verteilt sich auf die Stationen Arc 1600, 1800, 1950 und 2000.",
        "Von der Aiguille Rouge auf 3.226 Metern führt eine der längsten Abfahrten der Alpen über mehr als 2.000 Höhenmeter bis nach Villaroger.",
        "Mit der Standseilbahn ist Arc 1600 in sieben Minuten vom Bahnhof Bourg-Saint-Maurice erreichbar."]),
    "l2a": (4109, "Les Deux Alpes", "oisans", 1650, 3600, 200, "Les 2 Alpes", [
        "Les Deux Alpes ist bekannt für seinen Gletscher, auf dem bis in den Sommer hinein Ski gefahren wird.",
        "Der Ort liegt auf einem Hochplateau; ungewöhnlicherweise werden die Pisten nach unten hin immer leichter.",
        "Der Snowpark auf 2.600 Metern gehört zu den größten Frankreichs."]),
    "adh": (4110, "Alpe d'Huez", "oisans", 1860, 3330, 250, "Alpe d'Huez Grand Domaine", [
        "Alpe d'Huez ist als Sonnenterrasse bekannt – rund 300 Sonnentage im Jahr sind hier keine Werbeübertreibung.",
        "Vom Pic Blanc auf 3.330 Metern führt die Sarenne, mit 16 Kilometern eine der längsten schwarzen Pisten der Welt, ins Tal.",
        "Radsportfans kennen die 21 Kehren der Passstraße aus der Tour de France."]),
    "avo": (4111, "Avoriaz", "pds", 1800, 2466, 580, "Portes du Soleil", [
        "Avoriaz ist autofrei: Wer ankommt, lässt das Auto am Ortseingang und bewegt sich auf Ski, zu Fuß oder mit dem Pferdeschlitten.",
        "Die markante Holzarchitektur der Residenzen fügt sich in die Felsen über dem Tal ein.",
        "Über die Portes du Soleil fährt man auf Ski bis in die Schweiz nach Champéry."]),
    "zas": (4120, "Zell am See", "salzburg", 757, 2000, 138, "Zell am See-Kaprun", [
        "Zell am See liegt direkt am Zeller See; die Talstation der Schmittenhöhe ist vom Zentrum aus zu Fuß erreichbar.",
        "Auf dem Kitzsteinhorn in Kaprun wird schon ab Oktober Ski gefahren – der Gletscher reicht bis auf 3.029 Meter.",
        "Abends lockt die Fußgängerzone mit Cafés, Bars und Restaurants."]),
    "saa": (4121, "Saalbach", "salzburg", 1003, 2096, 270, "Skicircus Saalbach Hinterglemm Leogang Fieberbrunn", [
        "Saalbach ist der Après-Ski-Klassiker im Salzburger Land und liegt im Herzen des Skicircus.",
        "270 Pistenkilometer und 70 Lifte verbinden Saalbach, Hinterglemm, Leogang und Fieberbrunn zu einem der größten Skigebiete Österreichs.",
        "Das Dorfzentrum ist autofrei, die Lifte starten mitten im Ort."]),
    "fla": (4122, "Flachau", "salzburg", 925, 2188, 760, "Ski amadé", [
        "Flachau ist die Heimat von Hermann Maier und Teil von Ski amadé, dem größten Skiverbund Österreichs.",
        "Beim Nachtslalom im Januar kommt der Weltcup nach Flachau.",
        "Die Pisten Richtung Wagrain und Alpendorf sind breit und ideal für Familien."]),
    "isc": (4123, "Ischgl", "tirol", 1377, 2872, 239, "Silvretta Arena Ischgl–Samnaun", [
        "Ischgl im Paznaun hat eines der schneesichersten Skigebiete Tirols – die meisten Pisten liegen oberhalb von 2.000 Metern.",
        "Über die Silvretta Arena fährt man auf Ski bis ins zollfreie Samnaun in der Schweiz.",
        "Das Top of the Mountain Concert zum Saisonstart und zum Saisonende ist legendär."]),
    "sta": (4124, "St. Anton am Arlberg", "tirol", 1304, 2811, 305, "Ski Arlberg", [
        "St. Anton gilt als Wiege des alpinen Skilaufs – Hannes Schneider gründete hier 1921 eine der ersten Skischulen.",
        "Der Verbund Ski Arlberg verbindet St. Anton, Lech, Zürs, Warth und Stuben zu 305 Pistenkilometern.",
        "Die Variantenabfahrten von der Valluga sind bei Freeridern weltbekannt."]),
    "kit": (4125, "Kitzbühel", "tirol", 762, 2000, 233, "KitzSki", [
        "Kitzbühel verbindet eine mittelalterliche Altstadt mit einem der traditionsreichsten Skigebiete der Welt.",
        "Auf der Streif findet jedes Jahr im Januar das Hahnenkammrennen statt.",
        "Dank der 3S-Bahn ist das Gebiet vom Hahnenkamm bis zum Pass Thurn durchgehend befahrbar."]),
    "may": (4126, "Mayrhofen", "zillertal", 630, 2500, 142, "Mayrhofen-Hippach", [
        "Mayrhofen ist der lebhafteste Ort im Zillertal und Ausgangspunkt für die Skigebiete Penken und Ahorn.",
        "Die Harakiri ist mit 78 Prozent Gefälle die steilste präparierte Piste Österreichs.",
        "Der Penken Park zählt zu den bekanntesten Snowparks Europas."]),
    "ger": (4127, "Gerlos", "zillertal", 1245, 2300, 150, "Zillertal Arena", [
        "Gerlos liegt am Eingang der Zillertal Arena, des größten Skigebiets im Zillertal.",
        "Die Pisten reichen vom Zillertal über den Gerlospass bis ins Salzburger Land nach Königsleiten.",
        "Der Ort ist klein und überschaubar, die Lifte sind von den meisten Unterkünften zu Fuß erreichbar."]),
    "sol": (4128, "Sölden", "oetztal", 1368, 3340, 144, "Sölden", [
        "Sölden im Ötztal hat zwei Gletscher, Rettenbach und Tiefenbach, und ist damit von Oktober bis Mai schneesicher.",
        "Die „Big 3“ – drei Aussichtsplattformen über 3.000 Metern – gehören zum Pflichtprogramm.",
        "Auf dem Gaislachkogl wurde ein Teil des James-Bond-Films „Spectre“ gedreht."]),
    "obg": (4129, "Obergurgl", "oetztal", 1930, 3080, 112, "Obergurgl-Hochgurgl", [
        "Obergurgl ist das höchstgelegene Kirchdorf Österreichs und gilt als besonders schneesicher.",
        "Das Skigebiet ist ruhig und übersichtlich – ideal für Skikurse und Familien.",
        "Von Hochgurgl aus blickt man auf die Gletscher der Ötztaler Alpen."]),
    "lec": (4130, "Lech", "vorarlberg", 1450, 2811, 305, "Ski Arlberg", [
        "Lech am Arlberg ist ein traditionsreiches Walserdorf mit hohem Anspruch an Pisten und Service.",
        "Der Weiße Ring ist eine 22 Kilometer lange Skirunde um Lech, Zürs, Zug und Oberlech.",
        "Trotz seines Rufs ist Lech ein echtes Dorf geblieben, in dem die Lifte mitten im Ort starten."]),
    "liv": (4140, "Livigno", "lombardei", 1816, 2798, 115, "Livigno", [
        "Livigno liegt in einem Hochtal nahe der Schweizer Grenze und ist zollfreies Gebiet.",
        "Die beiden Skigebiete Carosello 3000 und Mottolino liegen sich an den Talseiten gegenüber.",
        "Der Mottolino Fun Mountain gehört zu den besten Snowparks Italiens."]),
    "cer": (4141, "Cervinia", "aosta", 2050, 3883, 360, "Matterhorn Ski Paradise", [
        "Breuil-Cervinia liegt auf 2.050 Metern an der Südseite des Matterhorns.",
        "Über den Theodulpass ist Cervinia mit Zermatt verbunden – ein Skigebiet in zwei Ländern.",
        "Die langen, breiten Pisten ins Valtournenche sind perfekt für Genussskifahrer."]),
    "mdc": (4142, "Madonna di Campiglio", "trentino", 1550, 2504, 156, "Skiarea Campiglio Dolomiti di Brenta", [
        "Madonna di Campiglio liegt zwischen der Brenta- und der Adamello-Presanella-Gruppe im Trentino.",
        "Auf der Canalone Miramonti findet der nächtliche Weltcup-Slalom „3-Tre“ statt.",
        "Schon Kaiserin Sisi verbrachte hier ihre Sommerfrische."]),
    "wol": (4143, "Wolkenstein in Gröden", "dolomiten", 1563, 2518, 1200, "Dolomiti Superski", [
        "Wolkenstein in Gröden liegt am Fuß des Sellastocks und ist Einstieg in die Sellaronda.",
        "Die Sellaronda führt über vier Pässe und rund 40 Kilometer rund um das Sellamassiv.",
        "Die Saslong ist jedes Jahr im Dezember Schauplatz der Weltcup-Abfahrt."]),
    "can": (4144, "Canazei", "dolomiten", 1465, 2950, 1200, "Dolomiti Superski", [
        "Canazei im Fassatal ist der lebhafteste Ort an der Sellaronda.",
        "Von hier aus erreicht man die Marmolada, mit 3.343 Metern der höchste Berg der Dolomiten.",
        "Enge Gassen, Holzbalkone und viele kleine Bars prägen das Ortsbild."]),
    "laa": (4150, "Laax", "gr", 1100, 3018, 224, "LAAX", [
        "Laax ist das Freestyle-Zentrum der Schweiz, mit mehreren Snowparks und einer der größten Halfpipes der Welt.",
        "Gemeinsam mit Flims und Falera bietet das Gebiet 224 Pistenkilometer bis hinauf zum Vorab-Gletscher.",
        "Die Bars an der Talstation und am Crap Sogn Gion machen Laax auch abends attraktiv."]),
    "dav": (4151, "Davos", "gr", 1560, 2844, 300, "Davos Klosters", [
        "Davos ist die höchstgelegene Stadt der Alpen und durch das Weltwirtschaftsforum bekannt.",
        "Die Parsenn-Abfahrt nach Küblis ist mehr als zwölf Kilometer lang.",
        "Mit dem Zug ist Davos ab Zürich in rund zweieinhalb Stunden erreichbar."]),
    "zer": (4152, "Zermatt", "wallis", 1620, 3883, 360, "Matterhorn Ski Paradise", [
        "Zermatt ist autofrei und liegt am Fuß des Matterhorns.",
        "Vom Klein Matterhorn auf 3.883 Metern fährt man auf Ski bis nach Italien.",
        "Die Gornergrat-Bahn ist die höchste Zahnradbahn Europas unter freiem Himmel."]),
    "saf": (4153, "Saas-Fee", "wallis", 1800, 3600, 100, "Saas-Fee", [
        "Saas-Fee wird wegen der 13 umliegenden Viertausender die „Perle der Alpen“ genannt.",
        "Die Metro Alpin ist die höchste Standseilbahn der Welt in einem Tunnel und bringt Skifahrer auf 3.500 Meter.",
        "Im Gletscherdorf sind nur Elektrofahrzeuge erlaubt."]),
    "obs": (4160, "Oberstdorf", "allgaeu", 815, 2224, 130, "Oberstdorf Kleinwalsertal", [
        "Oberstdorf ist der südlichste Ort Deutschlands und das Wintersportzentrum des Allgäus.",
        "Nebelhorn, Fellhorn und Söllereck bieten Pisten für jedes Niveau.",
        "Über das Fellhorn ist das Skigebiet mit dem Kleinwalsertal in Österreich verbunden."]),
    "gap": (4161, "Garmisch-Partenkirchen", "werdenfels", 708, 2720, 60, "Garmisch-Classic und Zugspitze", [
        "Garmisch-Partenkirchen liegt am Fuß der Zugspitze, des höchsten Bergs Deutschlands.",
        "Auf der Kandahar-Abfahrt fährt jedes Jahr der Weltcup.",
        "Das Gletscherskigebiet auf dem Zugspitzplatt ist meist schon im November geöffnet."]),
    "fel": (4162, "Feldberg", "schwarzwald", 1277, 1493, 36, "Liftverbund Feldberg", [
        "Der Feldberg ist mit 1.493 Metern der höchste Berg Baden-Württembergs und das größte Skigebiet des Schwarzwalds.",
        "Vom Seebuck reicht der Blick bei Föhn bis zu den Schweizer Alpen.",
        "Für ein Ski-Wochenende ab Stuttgart, Freiburg oder Karlsruhe ist die Anreise besonders kurz."]),
}
# Cities without any page or url; Canazei also has no description (it is optional).
CITIES_NO_URL = {"can", "ger"}
CITIES_NO_DESC = {"can"}
# Cities whose record carries its own contentUrl, and the site that shows them.
CITIES_OWN_PAGE = {"vt": "ski-boarderweek", "zas": "ski-wochenenden", "isc": "ski-wochenenden", "laa": "snowzone"}


def city_country(ck: str) -> str:
    return REGIONS[CITIES[ck][2]][2]


# --------------------------------------------------------------------------------------------
# Concepts
# --------------------------------------------------------------------------------------------

# key: uid, title, site (None: no url), path, own page, nights, skipass days, board, start weekday
CONCEPTS = {
    "bw": (4901, "Boarderweek", "ski-boarderweek", "/boarderweek/", True, 7, 6, "HP", 4),
    "so": (4902, "Skiopening", "ski-boarderweek", "/skiopening/", False, 4, 4, "4xAE", 2),
    "we": (4903, "Ski-Wochenende", "ski-wochenenden", "/ski-wochenende/", False, 2, 3, "FR", 3),
    "camp": (4904, "Snowzone Camp", "snowzone", "/camps/", True, 7, 6, "VP", 4),
    "sil": (4905, "Silvesterreise", "ep-reisen", "/silvesterreisen/", False, 6, 5, "HP", 5),
    "ost": (4906, "Osterreise", "ser", "/osterreisen/", False, 7, 6, "HP", 4),
    "fam": (4907, "Familienwoche", "ser", "/familienreisen/", False, 7, 6, "HP", 4),
    "uni": (4908, "Uni-Skireise", "snowzone", "/uni-skireisen/", False, 7, 6, "SV", 4),
    "firm": (4909, "Firmenreise", None, None, False, 3, 3, "HP", 3),
    "kurs": (4910, "Skikurs-Woche", "ser", "/skikurs-wochen/", False, 7, 6, "HP", 4),
}

CONCEPT_DESC = {
    "bw": ["Die Boarderweek ist eine Woche Ski- und Snowboardurlaub in der Gruppe: Busanreise über Nacht, "
           "Unterkunft nah am Lift, Skipass und ein Abendprogramm, bei dem niemand allein bleibt.",
           "Mitfahren kann jeder ab 18 Jahren. Die meisten Gäste sind zwischen 20 und 35, viele kommen "
           "mit Freunden, genauso viele allein."],
    "so": ["Beim Skiopening startet die Saison: Gletscher und hoch gelegene Skigebiete öffnen ihre Lifte, "
           "und in den Orten wird mit Konzerten und Partys gefeiert.",
           "Unsere Skiopening-Reisen dauern drei bis fünf Tage und liegen zwischen Ende Oktober und Mitte Dezember."],
    "we": ["Ein Ski-Wochenende ist die kurze Auszeit im Schnee: Abfahrt am Donnerstagabend, drei Skitage, "
           "zwei Nächte und Rückkehr in der Nacht auf Montag."],
    "camp": ["Die Snowzone Camps sind Ski- und Snowboardfreizeiten für Jugendliche von 14 bis 17 Jahren, "
             "begleitet von ausgebildeten Teamern.",
             "Gefahren wird in kleinen Gruppen nach Können; abends gibt es Programm im Haus."],
    "sil": ["Silvesterreisen verbinden Skitage zwischen den Jahren mit einer Silvesterfeier in den Bergen."],
    "ost": ["Osterreisen führen in der Osterferienzeit in hoch gelegene, schneesichere Skigebiete – "
            "Frühlingsskilauf mit langen, sonnigen Tagen."],
    "fam": ["Familienwochen liegen in den Schulferien und führen in Orte mit kurzen Wegen, "
            "guten Kinderskischulen und familienfreundlichen Unterkünften.",
            "Kinder unter 6 Jahren reisen im Zimmer der Eltern zum ermäßigten Preis."],
    "uni": ["Uni-Skireisen sind Wochenreisen für Studierende in den Semesterferien, meist in Apartments "
            "mit Selbstverpflegung und mit Après-Ski-Programm."],
    "firm": ["Firmenreisen stellen wir für Unternehmen, Vereine und Abteilungen individuell zusammen, "
             "ab 20 Teilnehmern auch mit eigenem Bus."],
    "kurs": ["In der Skikurs-Woche ist der Skikurs inklusive: fünf Vormittage in kleinen Gruppen mit "
             "staatlich geprüften Skilehrern, vom Anfänger bis zum Fortgeschrittenen."],
}

WEEKDAYS = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"]

# --------------------------------------------------------------------------------------------
# Hotels
# --------------------------------------------------------------------------------------------

HOTEL_TYPES = {1: "Ferienwohnung", 2: "Sportclub", 3: "Apartment", 4: "Gästehaus", 5: "Pension"}

# own code, aliases, name, article (der/die/das/pl), type, city, flags
#   nosite: no site/url (only used inside products)      detail: a page item with detailOf
#   own:    the record itself has a contentUrl
HOTELS = [
    ("LEDER", ["LEDWO"], "Sportclub Lederer", "der", 2, "zas", "own"),
    ("VTCHA", ["VTCH2"], "Résidence Val Chavière", "die", 3, "vt", "detail"),
    ("CHMOR", ["VTCHA"], "Hotel Chamois d'Or", "das", 4, "vt", "detail"),
    ("VTBAL", [], "Résidence Les Balcons de Val Thorens", "die", 3, "vt", "detail"),
    ("VTSCH", [], "Sportclub Le Schuss", "der", 2, "vt", ""),
    ("EDELW", ["LMEDW"], "Vacanceole Résidence L'Edelweiss", "die", 3, "lm", "detail"),
    ("REBER", [], "Résidence Les Alpages de Reberty", "die", 1, "lm", ""),
    ("LMBRU", [], "Sportclub Les Bruyères", "der", 2, "lm", "detail"),
    ("MOTTA", [], "Résidence Le Hameau du Mottaret", "die", 1, "mer", "detail"),
    ("COURF", [], "Résidence Les Chalets du Forum", "die", 3, "cou", "nosite"),
    ("VDSOL", [], "Chalet Le Solaise", "das", 4, "vdi", "detail"),
    ("ROGON", [], "Résidence Les Hauts du Rogoney", "die", 3, "vdi", ""),
    ("BORSA", [], "Résidence Le Borsat", "die", 3, "tig", "detail"),
    ("TGLAC", [], "Sportclub Le Lac", "der", 2, "tig", ""),
    ("TGCHL", [], "Résidence Les Chalets du Lac", "die", 1, "tig", ""),
    ("HBOIS", ["LPHB1"], "Résidence Les Hauts Bois", "die", 3, "lpl", "detail"),
    ("AIME2", [], "Pierre & Vacances Résidence Aime 2000", "die", 1, "lpl", ""),
    ("RUITO", [], "Résidence Le Ruitor", "die", 3, "lar", ""),
    ("CORTI", [], "Résidence Le Cortina", "die", 3, "l2a", "detail"),
    ("DAMEL", [], "Sportclub Le Mélèze", "der", 2, "l2a", "detail"),
    ("DIAMA", [], "Chalet Le Diamant", "das", 4, "l2a", "nosite"),
    ("OURSB", [], "Résidence L'Ours Blanc", "die", 3, "adh", "detail"),
    ("GENTI", [], "Chalet Les Gentianes", "das", 4, "adh", ""),
    ("ATRIA", [], "Résidence Atria-Crozats", "die", 3, "avo", "nosite"),
    ("ALROS", [], "Gästehaus Alpenrose", "das", 4, "zas", "detail"),
    ("ZUERH", [], "Pension Zürcherhof", "die", 5, "zas", "detail"),
    ("SCHMI", [], "Appartements Schmittenblick", "pl", 3, "zas", "nosite"),
    ("WALLE", [], "Sportclub Haus Wallegg", "der", 2, "saa", "detail"),
    ("KRIST", [], "Pension Kristall", "die", 5, "saa", ""),
    ("ZWOEL", [], "Apart Zwölferkogel", "das", 3, "saa", "detail"),
    ("HERMH", [], "Gästehaus Hermannhof", "das", 4, "fla", "detail"),
    ("SONNH", [], "Pension Sonnhof", "die", 5, "fla", ""),
    ("SILVR", ["ISCH1"], "Pension Silvretta", "die", 5, "isc", "detail"),
    ("PAZNA", [], "Apart Paznaun", "das", 3, "isc", ""),
    ("FIMBA", [], "Gästehaus Fimba", "das", 4, "isc", "detail"),
    ("VALLU", [], "Gästehaus Valluga", "das", 4, "sta", "detail"),
    ("NASSE", [], "Apartments Nasserein", "pl", 3, "sta", "nosite"),
    ("HAHNK", [], "Pension Hahnenkamm", "die", 5, "kit", "detail"),
    ("PENKE", ["MAYP1", "PENK2"], "Sportclub Haus Penken", "der", 2, "may", "detail"),
    ("AHORN", [], "Pension Ahornblick", "die", 5, "may", ""),
    ("TUXER", [], "Ferienwohnungen Tuxertal", "pl", 1, "may", "detail"),
    ("GERST", [], "Gästehaus Gerlosstein", "das", 4, "ger", ""),
    ("ISSKO", [], "Apart Isskogel", "das", 3, "ger", "nosite"),
    ("GAISL", [], "Pension Gaislach", "die", 5, "sol", "detail"),
    ("GIGGI", ["SOEL1", "GIGG2"], "Sportclub Haus Giggijoch", "der", 2, "sol", "detail"),
    ("RETTE", [], "Apart Rettenbach", "das", 3, "sol", ""),
    ("HOHEM", [], "Gästehaus Hohe Mut", "das", 4, "obg", "nosite detail"),
    ("OMESB", [], "Pension Omesberg", "die", 5, "lec", "detail"),
    ("MOTTO", [], "Residence Mottolino", "die", 3, "liv", "detail"),
    ("LARIC", [], "Garni Larice", "das", 5, "liv", ""),
    ("CAROS", [], "Appartamenti Carosello", "pl", 1, "liv", ""),
    ("CIELO", [], "Residence Cielo Alto", "die", 3, "cer", "detail"),
    ("BREUI", [], "Hotel Breuil", "das", 4, "cer", ""),
    ("BELLA", [], "Residence Bellavista", "die", 3, "mdc", ""),
    ("CRIST", [], "Garni Cristallo", "das", 5, "mdc", "detail"),
    ("DOLOM", [], "Garni Dolomitenhof", "das", 5, "wol", "detail"),
    ("CIAMP", [], "Apartments Ciampinoi", "pl", 1, "wol", ""),
    ("MARMO", [], "Residence Marmolada", "die", 3, "can", "nosite"),
    ("MURSC", ["LAAX1"], "Sportclub Lodge Murschetg", "der", 2, "laa", "detail"),
    ("CAUMA", [], "Pension Casa Caumasee", "die", 5, "laa", ""),
    ("PARSE", [], "Ferienwohnungen Parsenn", "pl", 1, "dav", ""),
    ("JAKOB", [], "Pension Jakobshorn", "die", 5, "dav", "detail"),
    ("MATTB", [], "Chalet Matterhornblick", "das", 1, "zer", "detail"),
    ("BELRI", [], "Gästehaus Bellerive", "das", 4, "zer", ""),
    ("ALLAL", [], "Gästehaus Allalin", "das", 4, "saf", ""),
    ("GLETS", [], "Apartments Gletschergarten", "pl", 3, "saf", "nosite"),
    ("NEBEL", [], "Gästehaus Nebelhorn", "das", 4, "obs", "detail"),
    ("BREIT", [], "Pension Breitachklamm", "die", 5, "obs", ""),
    ("FELLH", [], "Ferienwohnung Fellhorn", "die", 1, "obs", ""),
    ("KANDA", [], "Pension Kandahar", "die", 5, "gap", "detail"),
    ("ZUGSP", [], "Gästehaus Zugspitzblick", "das", 4, "gap", ""),
    ("SEEBU", [], "Pension Seebuck", "die", 5, "fel", ""),
    ("FELDH", [], "Ferienwohnung Feldberger Hof", "die", 1, "fel", ""),
]

# --------------------------------------------------------------------------------------------
# Products
# --------------------------------------------------------------------------------------------

# code, site, concept, title, destinations (city key, "r:<region>", "c:<country>"), hotel codes, options
#   searchable=False, unbookable=True, noskipass=True, page="detail"|"own"|"none"|"nourl",
#   board=..., nights=..., skipass=..., price=<editorial "ab" price>, teaser=..., path=...
PRODUCTS = [
    ("SSLMP", "ski-boarderweek", "so", "Skiopening Les Menuires", ["lm"], ["EDELW", "REBER", "LMBRU"], {"price": 379}),
    ("SSVTP", "ski-boarderweek", "so", "Skiopening Val Thorens", ["vt"], ["VTCHA", "VTBAL"], {}),
    ("SSVTO", "ski-boarderweek", "so", "Skiopening Val Thorens ohne Skipass", ["vt"], ["VTCHA", "VTBAL"], {"noskipass": True}),
    ("SBWVT", "ski-boarderweek", "bw", "Boarderweek Val Thorens", ["vt"], ["VTSCH", "VTCHA", "CHMOR"],
     {"path": "/reisen/frankreich/val-thorens-boarderweek/",
      "teaser": "Eine Woche Snowboarden im höchsten Skigebiet Europas."}),
    ("SBWDA", "ski-boarderweek", "bw", "Boarderweek Les Deux Alpes", ["l2a"], ["CORTI", "DAMEL"], {"board": "SV"}),
    ("SBWTI", "ski-boarderweek", "bw", "Boarderweek Tignes", ["tig"], ["BORSA", "TGLAC"], {"board": "6xAE"}),
    ("SBWAH", "ski-boarderweek", "bw", "Boarderweek Alpe d'Huez", ["adh"], ["OURSB", "GENTI"], {"board": "SV"}),
    ("SBWLX", "ski-boarderweek", "bw", "Boarderweek Laax", ["laa"], ["MURSC"], {"price": 689}),
    ("SBWMH", "ski-boarderweek", "bw", "Boarderweek Mayrhofen", ["may"], ["PENKE", "AHORN"], {}),
    ("SBWSF", "ski-boarderweek", "bw", "Boarderweek Saas-Fee", ["saf"], ["ALLAL", "GLETS"],
     {"unbookable": True, "teaser": "Neu im Programm: Gletscher-Boarderweek im Frühjahr – Termine und Preise folgen."}),
    ("SXLVP", "ski-boarderweek", "sil", "Silvester-Boarderweek Livigno", ["liv"], ["MOTTO", "LARIC", "CAROS"], {}),
    ("SSLMP", "snowzone", "so", "Snowzone Skiopening Les Menuires", ["lm"], ["EDELW", "LMBRU"], {}),
    ("SCDAP", "snowzone", "camp", "Snowzone Camp Les Deux Alpes", ["l2a"], ["DAMEL", "DIAMA"], {}),
    ("SCLXP", "snowzone", "camp", "Snowzone Freestyle Camp Laax", ["laa"], ["MURSC", "CAUMA"], {"page": "own"}),
    ("SUVTP", "snowzone", "uni", "Uni-Skireise Val Thorens", ["vt"], ["VTBAL", "VTSCH"], {"price": 429}),
    ("SUTIP", "snowzone", "uni", "Uni-Skireise Tignes", ["tig"], ["TGCHL", "BORSA"], {}),
    ("SUSBP", "snowzone", "uni", "Uni-Skireise Saalbach", ["saa"], ["WALLE", "ZWOEL"], {}),
    ("SXVIP", "snowzone", "sil", "Silvester in Val d'Isère", ["vdi"], ["VDSOL", "ROGON"], {}),
    ("SOLVP", "snowzone", "ost", "Osterreise Livigno", ["liv"], ["CAROS", "MOTTO"], {"board": "SV"}),
    ("SZTDA", "snowzone", "camp", "Teamer-Schulung Les Deux Alpes", ["l2a"], ["DIAMA"],
     {"searchable": False, "page": "nourl", "nights": 5, "skipass": 5,
      "teaser": "Interne Ausbildungswoche für neue Snowzone-Teamer – nicht öffentlich buchbar."}),
    ("SWZSP", "ski-wochenenden", "we", "Ski-Wochenende Zell am See", ["zas"], ["LEDER", "ALROS", "ZUERH", "SCHMI"], {"price": 219}),
    ("SWZSO", "ski-wochenenden", "we", "Ski-Wochenende Zell am See ohne Skipass", ["zas"], ["LEDER", "ZUERH"], {"noskipass": True}),
    ("SWSBP", "ski-wochenenden", "we", "Ski-Wochenende Saalbach", ["saa"], ["KRIST", "WALLE"], {}),
    ("SWISP", "ski-wochenenden", "we", "Ski-Wochenende Ischgl", ["isc"], ["SILVR", "PAZNA", "FIMBA"], {}),
    ("SWSOP", "ski-wochenenden", "we", "Ski-Wochenende Sölden", ["sol"], ["GAISL", "GIGGI"], {}),
    ("SWMHP", "ski-wochenenden", "we", "Ski-Wochenende Mayrhofen", ["may"], ["PENKE", "TUXER"], {}),
    ("SWOBP", "ski-wochenenden", "we", "Ski-Wochenende Oberstdorf", ["obs"], ["NEBEL", "BREIT", "FELLH"], {}),
    ("SWGPP", "ski-wochenenden", "we", "Ski-Wochenende Garmisch-Partenkirchen", ["gap"], ["KANDA", "ZUGSP"], {}),
    ("SWFBP", "ski-wochenenden", "we", "Ski-Wochenende Feldberg", ["fel"], ["SEEBU", "FELDH"], {"page": "own"}),
    ("SSZSP", "ski-wochenenden", "so", "Skiopening Kitzsteinhorn – Zell am See", ["zas"], ["LEDER", "ALROS"],
     {"nights": 3, "skipass": 3, "board": "HP"}),
    ("SSSOP", "ski-wochenenden", "so", "Skiopening Sölden", ["sol"], ["GIGGI", "RETTE"], {"nights": 3, "skipass": 3, "board": "HP"}),
    ("SWZSP", "ser", "we", "Skiwochenende Zell am See – Sportclub Lederer", ["zas"], ["LEDER"], {"bare_host": True}),
    ("SFLMP", "ser", "fam", "Familienwoche Les Menuires", ["lm"], ["REBER", "EDELW"], {"board": "SV"}),
    ("SFPDP", "ser", "fam", "Familienwoche Paradiski", ["r:paradiski"], ["HBOIS", "AIME2", "RUITO"], {"board": "SV"}),
    ("SFFLP", "ser", "fam", "Familienwoche Flachau", ["fla"], ["HERMH", "SONNH"], {"price": 589}),
    ("SFAVP", "ser", "fam", "Familienwoche Avoriaz", ["avo"], ["ATRIA"], {"board": "SV"}),
    ("SKOGP", "ser", "kurs", "Skikurs-Woche Obergurgl", ["obg"], ["HOHEM"], {"board": "VP"}),
    ("SKKIP", "ser", "kurs", "Skikurs-Woche Kitzbühel", ["kit"], ["HAHNK"], {}),
    ("SKDVP", "ser", "kurs", "Skikurs-Woche Davos", ["dav"], ["PARSE", "JAKOB"], {}),
    ("SOVTP", "ser", "ost", "Osterreise Val Thorens", ["vt"], ["VTCHA", "CHMOR"], {}),
    ("SOZEP", "ser", "ost", "Osterreise Zermatt & Cervinia", ["zer", "cer"], ["MATTB", "BELRI", "CIELO"], {}),
    ("SODOP", "ser", "ost", "Ostern in den Dolomiten – Sellaronda", ["r:dolomiten"], ["DOLOM", "CIAMP", "MARMO"], {}),
    ("STTVP", "ep-reisen", "firm", "Firmenreise Les 3 Vallées", ["r:3v"], ["MOTTA", "COURF"], {}),
    ("STSAP", "ep-reisen", "firm", "Firmenreise St. Anton am Arlberg", ["sta"], ["VALLU", "NASSE"], {}),
    ("STCHP", "ep-reisen", "firm", "Firmenreise Schweiz", ["c:ch"], ["JAKOB", "CAUMA", "BELRI"], {}),
    ("SXISP", "ep-reisen", "sil", "Silvesterreise Ischgl", ["isc"], ["SILVR", "FIMBA"], {}),
    ("SXMCP", "ep-reisen", "sil", "Silvesterreise Madonna di Campiglio", ["mdc"], ["BELLA", "CRIST"], {"price": 899}),
    ("SSSOP", "ep-reisen", "so", "Skiopening Sölden", ["sol"], ["GAISL", "RETTE"], {"nights": 3, "skipass": 3, "board": "HP"}),
    ("SGGER", "ep-reisen", "firm", "Geschlossene Gruppenreise Skiclub Rheinland – Gerlos", ["ger"], ["GERST", "ISSKO"],
     {"searchable": False, "page": "none", "nights": 4, "skipass": 4,
      "teaser": "Geschlossene Gruppenreise für die Mitglieder des Skiclub Rheinland e. V. – Anmeldung nur über den Verein."}),
    ("SOCEP", "ep-reisen", "ost", "Osterreise Cervinia", ["cer"], ["CIELO", "BREUI"], {}),
    ("SKLEP", "ep-reisen", "kurs", "Skikurs-Woche Lech am Arlberg", ["lec"], ["OMESB"], {}),
]

# --------------------------------------------------------------------------------------------
# Bus routes (pickups), used in product pages, FAQs and the Zustieg pages
# --------------------------------------------------------------------------------------------

STOPS = {
    "Köln": "Hauptbahnhof, Breslauer Platz",
    "Bonn": "ZOB, Bussteig 7",
    "Düsseldorf": "Hauptbahnhof, Worringer Platz",
    "Dortmund": "Fernbusterminal Sonnenstraße",
    "Frankfurt am Main": "Stadion, Parkplatz P9",
    "Mannheim": "Hauptbahnhof, Heinrich-von-Stephan-Straße",
    "Karlsruhe": "Hauptbahnhof, Südausgang",
    "Freiburg im Breisgau": "ZOB, Bismarckallee",
    "Basel": "Badischer Bahnhof, Schwarzwaldallee",
    "Stuttgart": "Flughafen/Messe, Parkplatz P20",
    "Ulm": "ZOB, Friedrich-Ebert-Straße",
    "München": "P+R Fröttmaning",
    "Nürnberg": "Messe, Parkplatz Süd",
    "Würzburg": "Talavera-Parkplatz",
    "Singen": "Bahnhof, Busparkplatz Nord",
    "Zürich": "Carparkplatz Sihlquai",
}

ROUTES = {
    "fr": [("Köln", 0), ("Bonn", 35), ("Frankfurt am Main", 150), ("Mannheim", 215),
           ("Karlsruhe", 260), ("Freiburg im Breisgau", 345), ("Basel", 395)],
    "at": [("Köln", 0), ("Frankfurt am Main", 150), ("Mannheim", 215), ("Stuttgart", 330),
           ("Ulm", 400), ("München", 500)],
    "it": [("Dortmund", 0), ("Köln", 75), ("Frankfurt am Main", 225), ("Würzburg", 330),
           ("Nürnberg", 410), ("München", 545)],
    "ch": [("Köln", 0), ("Frankfurt am Main", 150), ("Mannheim", 215), ("Karlsruhe", 260),
           ("Stuttgart", 345), ("Singen", 460), ("Zürich", 530)],
    "de": [("Düsseldorf", 0), ("Köln", 45), ("Frankfurt am Main", 195), ("Stuttgart", 375),
           ("Ulm", 445), ("München", 520)],
    "fel": [("Köln", 0), ("Frankfurt am Main", 150), ("Mannheim", 215), ("Karlsruhe", 260),
            ("Freiburg im Breisgau", 345)],
}


def route_for(p: dict) -> list[tuple[str, int]]:
    if p["city"] == "fel":
        return ROUTES["fel"]
    return ROUTES[p["country"]]


def clock(minutes: int) -> str:
    m = minutes % (24 * 60)
    s = f"{m // 60:02d}:{m % 60:02d} Uhr"
    return s + (" (Folgetag)" if minutes >= 24 * 60 else "")


# --------------------------------------------------------------------------------------------
# The model: every item and record, built once, rendered afterwards
# --------------------------------------------------------------------------------------------

ITEMS: list[dict] = []          # manifest items
RECORDS: list[dict] = []        # records.json
PAGES: dict[str, str] = {}      # contentUrl -> HTML
EDGE: list[str] = []            # edge cases for examples/ski/README.md (also printed)

C = {}   # country key -> dict
R = {}   # region key -> dict
T = {}   # city key -> dict
K = {}   # concept key -> dict
H = {}   # hotel code -> dict
P: list[dict] = []  # products in uid order


def item(type_: str, uid: int, modified: str, title: str, breadcrumb: list[str],
         site: str | None = None, url: str | None = None, content_url: str | None = None,
         detail_of: dict | None = None) -> dict:
    it = {"type": type_, "uid": uid, "language": "de", "modified": modified}
    if site:
        it["site"] = site
        it["url"] = url
    it["title"] = title
    it["breadcrumb"] = breadcrumb
    if content_url:
        it["contentUrl"] = content_url
    if detail_of:
        it["detailOf"] = detail_of
    ITEMS.append(it)
    return it


def record(type_: str, uid: int, data: dict) -> None:
    RECORDS.append({"type": type_, "uid": uid, "language": "de", "data": data})


def paras(texts: list[str]) -> str:
    return "".join(f"<p>{t}</p>" for t in texts)


def in_dest(p: dict) -> str:
    return p["in_dest"]


def build_geo() -> None:
    for ck, c in COUNTRIES.items():
        C[ck] = {"key": ck, "uid": c["uid"], "title": c["title"], "gen": c["gen"], "own": c["own"]}
    for rk, (uid, title, ck, desc) in REGIONS.items():
        R[rk] = {"key": rk, "uid": uid, "title": title, "country": ck, "desc": desc}
    for tk, (uid, title, rk, alt, top, km, area, facts) in CITIES.items():
        T[tk] = {"key": tk, "uid": uid, "title": title, "region": rk, "country": R[rk]["country"],
                 "alt": alt, "top": top, "km": km, "area": area, "facts": facts}


def build_concepts() -> None:
    for kk, (uid, title, site, path, own, nights, sp, board, wd) in CONCEPTS.items():
        K[kk] = {"key": kk, "uid": uid, "title": title, "site": site, "path": path, "own": own,
                 "nights": nights, "skipass": sp, "board": board, "weekday": wd}


def build_products() -> None:
    uid = 1201
    for code, site, kk, title, dests, hotels, opt in PRODUCTS:
        k = K[kk]
        refs, cities = [], []
        for d in dests:
            if d.startswith("r:"):
                refs.append(("region", d[2:]))
            elif d.startswith("c:"):
                refs.append(("country", d[2:]))
            else:
                refs.append(("city", d))
                cities.append(d)
        hotel_cities = []
        for hc in hotels:
            tk = next(h[5] for h in HOTELS if h[0] == hc)
            if tk not in hotel_cities:
                hotel_cities.append(tk)
        kind, key = refs[0]
        if kind == "city":
            country = T[key]["country"]
            label = join_de([T[c]["title"] for c in cities])
            in_d = "in " + label
            crumb_place = T[key]["title"]
        elif kind == "region":
            country = R[key]["country"]
            label = R[key]["title"]
            in_d = {"paradiski": "in Paradiski", "dolomiten": "in den Dolomiten",
                    "3v": "in den 3 Vallées"}.get(key, "in " + label)
            crumb_place = label
        else:
            country = key
            label = C[key]["title"]
            in_d = "in der Schweiz" if key == "ch" else "in " + label
            crumb_place = None
        areas = []
        for tk in hotel_cities:
            if T[tk]["area"] not in areas:
                areas.append(T[tk]["area"])
        p = {
            "uid": uid, "code": code, "site": site, "concept": kk, "title": title,
            "refs": refs, "hotels": hotels, "opt": opt,
            "city": cities[0] if cities else hotel_cities[0], "hotel_cities": hotel_cities,
            "country": country, "label": label, "in_dest": in_d, "crumb_place": crumb_place,
            "area": join_de(areas, "oder") if kind == "country" else join_de(areas),
            "nights": opt.get("nights", k["nights"]), "skipass": opt.get("skipass", k["skipass"]),
            "board": opt.get("board", k["board"]), "noskipass": opt.get("noskipass", False),
            "searchable": opt.get("searchable", True), "unbookable": opt.get("unbookable", False),
            "page": opt.get("page", "detail"),
        }
        P.append(p)
        uid += 1
    # pin the contract's example: SBWVT is product 1204
    assert next(p for p in P if p["code"] == "SBWVT")["uid"] == 1204


def build_hotels() -> None:
    uid = 2101
    for code, aliases, name, art, typ, tk, flags in HOTELS:
        fl = flags.split()
        users = [p for p in P if code in p["hotels"]]
        site = None
        if "nosite" not in fl:
            site = next((p["site"] for p in users if p["page"] != "nourl"), "ser")
        H[code] = {"uid": uid, "code": code, "aliases": aliases, "title": name, "art": art,
                   "type": typ, "city": tk, "flags": fl, "site": site, "users": users}
        uid += 1
    assert H["LEDER"]["uid"] == 2101


# --------------------------------------------------------------------------------------------
# German grammar for hotel names
# --------------------------------------------------------------------------------------------

def Art(h: dict) -> str:
    return {"der": "Der", "die": "Die", "das": "Das", "pl": "Die"}[h["art"]]


def im(h: dict) -> str:
    return {"der": "im", "die": "in der", "das": "im", "pl": "in den"}[h["art"]]


def verb(h: dict, sg: str, pl: str) -> str:
    return pl if h["art"] == "pl" else sg


# --------------------------------------------------------------------------------------------
# Hotel records
# --------------------------------------------------------------------------------------------

def hotel_facts(h: dict) -> dict:
    r = rng_for("hotel-facts", h["code"])
    t = T[h["city"]]
    typ = h["type"]
    beds = {1: (12, 48), 2: (60, 160), 3: (40, 220), 4: (18, 46), 5: (14, 40)}[typ]
    lift = r.choice([0, 30, 50, 80, 120, 150, 200, 250, 300, 400, 500, 650, 800, 1200])
    if t["alt"] < 1300 and lift < 80:   # valley towns: nobody lives on the piste
        lift = r.choice([80, 150, 300, 500])
    if t["alt"] >= 1800 and lift > 500:   # purpose-built stations: everything is close to a lift
        lift = r.choice([100, 200, 300, 400])
    if t["alt"] >= 1800 and typ in (1, 3) and r.random() < 0.5:
        lift = r.choice([0, 20, 50])
    facts = {
        "beds": r.randrange(beds[0], beds[1] + 1, 2),
        "altitudeM": t["alt"] + r.randrange(-30, 160, 5),
        "distanceLiftM": lift,
        "distanceCentreM": r.choice([50, 100, 150, 200, 300, 400, 600, 800, 1000, 1500]),
        "sauna": r.random() < (0.8 if typ in (2, 4) else 0.35),
        "wifi": r.random() < 0.9,
        "pool": typ in (2, 3, 4) and r.random() < 0.15,
        "boardingHouse": typ in (4, 5) and r.random() < 0.4,
    }
    if h["code"] == "LEDER":
        facts.update(beds=64, altitudeM=760, distanceLiftM=300, distanceCentreM=150, sauna=True, wifi=True,
                     boardingHouse=False, pool=False)
    return facts


LAGE = [
    ("ruhig am Ortsrand", "Wer abends Ruhe sucht, ist hier richtig."),
    ("zentral", "Bäcker, Supermarkt und Skiverleih sind in wenigen Minuten zu Fuß erreichbar."),
    ("in sonniger Hanglage", "Von vielen Zimmern blickt man über das Tal."),
    ("mitten im Ort", "Restaurants und Bars liegen gleich um die Ecke."),
    ("etwas oberhalb des Zentrums", "Zum Ortskern geht man wenige Minuten bergab."),
]

TYPE_TEXT = {
    1: ["Jede Wohnung hat eine voll ausgestattete Küche, ein Bad mit Dusche/WC und einen Wohnbereich mit Schlafcouch.",
        "Die Ferienwohnungen sind für 2 bis 6 Personen ausgelegt und ideal für Familien oder Freundesgruppen, die sich selbst versorgen möchten.",
        "Bettwäsche ist vorhanden, Handtücher bringen die Gäste selbst mit."],
    2: ["Als Sportclub richtet sich das Haus an Gäste, die tagsüber auf der Piste und abends in Gesellschaft sein wollen.",
        "Es gibt Mehrbettzimmer für 3 bis 6 Personen sowie Doppelzimmer (DZ); Einzelzimmer (EZ) nur auf Anfrage.",
        "Im großen Aufenthaltsraum mit Bar, Kicker und Leinwand trifft sich die Gruppe nach dem Skitag."],
    3: ["Die Apartments für 2 bis 8 Personen haben eine Kochnische mit Geschirrspüler, ein Bad und meist einen Balkon.",
        "Einzelbelegung ist nicht möglich; gebucht wird pro Person im Apartment.",
        "An der Rezeption gibt es Brötchenservice, Skischränke und einen Waschsalon."],
    4: ["Das Haus wird von der Gastgeberfamilie selbst geführt, die Gäste oft seit vielen Jahren kennen.",
        "Die Zimmer sind Doppelzimmer (DZ) und Mehrbettzimmer, einige auch als Einzelzimmer (EZ) buchbar.",
        "Morgens gibt es ein reichhaltiges Frühstücksbuffet, abends auf Wunsch Halbpension (HP)."],
    5: ["Die Pension hat gemütliche Zimmer mit Dusche/WC, die meisten mit Balkon.",
        "Gebucht werden Doppelzimmer (DZ) und Dreibettzimmer; Einzelzimmer (EZ) gibt es gegen Zuschlag.",
        "Das Frühstück ist im Preis enthalten; Halbpension (HP) kann bei einigen Reisen dazugebucht werden."],
}


def hotel_description(h: dict) -> str:
    r = rng_for("hotel-desc", h["code"])
    t = T[h["city"]]
    f = h["facts"]
    if h["code"] == "LEDER":
        return paras([
            "Unser Sportclub liegt im Zentrum von Zell am See, nur 150 Meter von der Fußgängerzone und 300 Meter "
            "von der Talstation der Schmittenhöhe entfernt. Der <strong>Sportclub Lederer</strong> ist seit Jahren "
            "das Stammhaus unserer Ski-Wochenenden.",
            "Es gibt Mehrbettzimmer und Doppelzimmer (DZ) mit Dusche/WC, einen Skikeller mit Schuhtrocknern, eine Sauna "
            "und eine Bar mit Sonnenterrasse. WLAN ist im ganzen Haus kostenlos.",
            "Zum Kitzsteinhorn in Kaprun fährt der Skibus in rund 20 Minuten; die Haltestelle liegt direkt vor dem Haus.",
        ])
    lage, lage2 = r.choice(LAGE)
    if f["distanceLiftM"] <= 50:
        lage, lage2 = "direkt an der Piste", "Morgens geht es mit Ski vor der Tür los, abends bis vors Haus zurück."
    p1 = (f"{Art(h)} {h['title']} {verb(h, 'liegt', 'liegen')} {lage} in {t['title']}, "
          f"{num(f['distanceLiftM'])} Meter vom nächsten Lift und {num(f['distanceCentreM'])} Meter vom "
          f"Ortszentrum entfernt. {lage2}")
    if f["distanceLiftM"] == 0:
        p1 = (f"{Art(h)} {h['title']} {verb(h, 'liegt', 'liegen')} direkt an der Piste in {t['title']} – "
              f"Ski-in/Ski-out, {num(f['distanceCentreM'])} Meter vom Ortszentrum. {lage2}")
    tt = TYPE_TEXT[h["type"]][:]
    r.shuffle(tt)
    p2 = " ".join(tt[:2])
    extras = []
    if f["sauna"]:
        extras.append(r.choice(["Nach dem Skitag entspannen die Gäste in der Sauna.",
                                "Eine Sauna steht den Gästen kostenlos zur Verfügung.",
                                "Zum Haus gehört ein kleiner Wellnessbereich mit Sauna."]))
    if f["pool"]:
        extras.append("Im Haus gibt es ein Hallenbad.")
    if f["wifi"]:
        extras.append(r.choice(["WLAN ist kostenlos.", "Kostenloses WLAN gibt es im ganzen Haus.",
                                "WLAN ist im Preis enthalten."]))
    else:
        extras.append("WLAN gibt es nur im Aufenthaltsraum, der Empfang in den Zimmern ist schwach.")
    extras.append(f"Insgesamt {verb(h, 'hat', 'haben')} {Art(h).lower()} {h['title']} {f['beds']} Betten auf {num(f['altitudeM'])} Metern Höhe.")
    texts = [p1, p2, " ".join(extras)]
    if h["code"] == "VTCHA":
        texts.insert(1, "Die Résidence Val Chavière trägt den Namen des Col de la Val Chavière und liegt am oberen "
                        "Ortsrand von Val Thorens mit Blick auf den Péclet-Gletscher.")
    if h["code"] == "EDELW":
        texts.insert(1, "Die Residenz gehört zur Kette Vacanceole; in den Unterlagen des Busunternehmens "
                        "heißt sie manchmal nur „L'Edelweiss Les Menuires“.")
    if h["code"] == "ZUERH":
        texts.insert(1, "Ihren Namen hat die Pension Zürcherhof von einer Zürcher Familie, die das Haus in den "
                        "1960er-Jahren als Ferienpension gebaut hat.")
    return paras(texts)


def build_hotel_records() -> None:
    for code, h in H.items():
        h["facts"] = hotel_facts(h)
        t = T[h["city"]]
        record("hotel", h["uid"], {
            "title": h["title"],
            "codes": [code] + h["aliases"],
            "type": h["type"],
            "city": ref("city", t["uid"]),
            "facts": h["facts"],
            "description": hotel_description(h),
        })


# --------------------------------------------------------------------------------------------
# Product texts
# --------------------------------------------------------------------------------------------

TEASERS = {
    "bw": ["Eine Woche Ski und Snowboard mit Gleichgesinnten {in_dest}.",
           "Sieben Nächte {label}: Piste, Park und Party mit der Boarderweek.",
           "Boarderweek {in_dest} – Busanreise, Unterkunft, Skipass und Programm."],
    "so": ["Saisonstart {in_dest}: {sp} Skitage zum Opening.",
           "Die ersten Schwünge des Winters {in_dest}.",
           "Skiopening {in_dest} mit Busanreise und Opening-Partys."],
    "we": ["Drei Skitage {in_dest} – Abfahrt Donnerstagabend, zurück am Montagmorgen.",
           "Kurz raus, voll rein: Ski-Wochenende {in_dest}.",
           "Ski-Wochenende {in_dest} mit Nachtbus und zwei Übernachtungen."],
    "camp": ["Ski- und Snowboardcamp {in_dest} für Jugendliche von 14 bis 17 Jahren.",
             "Eine Woche Camp {in_dest}: Coaching, Snowpark und Teamer, die selbst fahren."],
    "sil": ["Silvester im Schnee {in_dest}.",
            "Skitage zwischen den Jahren und eine Silvesterparty {in_dest}."],
    "ost": ["Frühlingsskilauf in den Osterferien {in_dest}.",
            "Ostern im Schnee {in_dest} – sonnig und schneesicher."],
    "fam": ["Skiurlaub für Familien {in_dest}, mit Kinderskischule in der Nähe.",
            "Familienwoche {in_dest} in den Schulferien."],
    "uni": ["Die Semesterferien-Woche im Schnee {in_dest}.",
            "Günstige Skiwoche für Studierende {in_dest}."],
    "firm": ["Teamevent im Schnee {in_dest} – organisiert von der Anreise bis zum Hüttenabend.",
             "Firmenreise {in_dest} für Gruppen ab 20 Personen."],
    "kurs": ["Skifahren lernen {in_dest}: Skikurs inklusive.",
             "Skikurs-Woche {in_dest} mit staatlich geprüften Skilehrern."],
}

INTROS = {
    "bw": [
        "Die <strong>Boarderweek</strong> {in_dest} ist unser Klassiker: {nights} Nächte, {sp} Tage auf Brett oder Ski "
        "und abends Programm mit der ganzen Gruppe. Mitfahren kann jeder ab 18 Jahren – vom Anfänger bis zum Parkrider.",
        "Eine Woche {label} mit der <strong>Boarderweek</strong> heißt: morgens als Erste am Lift, nachmittags im Snowpark "
        "und abends gemeinsam beim Essen. Die Reiseleitung kennt den Ort seit Jahren und zeigt dir die besten Abfahrten "
        "abseits der Massen.",
        "Snowboarder und Skifahrer, die lieber in der Gruppe als allein unterwegs sind, treffen sich bei der "
        "<strong>Boarderweek</strong> {in_dest}. Du reist mit Gleichgesinnten an, teilst dir mit Freunden die Unterkunft "
        "und entscheidest jeden Tag selbst, wie viel Programm du willst.",
    ],
    "so": [
        "Zum <strong>Skiopening</strong> {in_dest} [[startest du||starten Sie]] in den Winter, bevor die meisten anderen "
        "überhaupt an Schnee denken. {nights} Nächte, {sp} Skitage und die Opening-Partys im Ort machen den Saisonauftakt "
        "zum Pflichttermin.",
        "Das <strong>Skiopening</strong> {in_dest} ist der Saisonstart für alle, die es nicht erwarten können: Die ersten "
        "Pisten sind frisch präpariert, die Lifte laufen und abends wird der Winter gebührend eröffnet.",
        "Frühe Saison, frischer Schnee, volle Energie: Beim <strong>Skiopening</strong> {in_dest} [[bist du||sind Sie]] "
        "dabei, wenn die ersten Lifte des Winters anlaufen. Die Reise ist kurz genug für ein verlängertes Wochenende und "
        "lang genug, um die Ski richtig einzufahren.",
    ],
    "we": [
        "Donnerstagabend los, Sonntagabend zurück: Das <strong>Ski-Wochenende</strong> {in_dest} ist der schnellste Weg "
        "aus dem Alltag auf die Piste. [[Du schläfst||Sie schlafen]] im Bus, [[stehst||stehen]] am Morgen im Skigebiet "
        "und [[hast||haben]] drei volle Skitage.",
        "Ein <strong>Ski-Wochenende</strong> {in_dest} braucht keinen Urlaubsantrag für eine ganze Woche: Abfahrt am "
        "Donnerstagabend, drei Skitage, zwei Nächte im Ort und Rückkehr in der Nacht auf Montag.",
        "Wer nur ein paar Tage Zeit hat, ist beim <strong>Ski-Wochenende</strong> {in_dest} richtig. Die Nachtfahrt spart "
        "einen Urlaubstag, und [[du nutzt||Sie nutzen]] die Zeit vor Ort voll für die Piste.",
    ],
    "camp": [
        "Das <strong>Snowzone Camp</strong> {in_dest} ist eine Woche Schnee für Jugendliche von 14 bis 17 Jahren – mit "
        "Teamern, die selbst leidenschaftlich fahren, mit täglichem Coaching und mit einem Programm, bei dem keine "
        "Langeweile aufkommt.",
        "Im <strong>Snowzone Camp</strong> {in_dest} fährst du in kleinen Gruppen nach Können, lernst neue Tricks im Park "
        "und verbringst die Abende mit Leuten, die genauso schneeverrückt sind wie du.",
    ],
    "sil": [
        "Den Jahreswechsel im Schnee feiern: Die <strong>Silvesterreise</strong> {in_dest} verbindet Skitage zwischen den "
        "Jahren mit einer Silvesternacht, die [[du||Sie]] so schnell nicht [[vergisst||vergessen]].",
        "Zwischen Weihnachten und Neujahr sind die Tage kurz, die Pisten aber oft in bestem Zustand. Mit der "
        "<strong>Silvesterreise</strong> {in_dest} [[verbringst du||verbringen Sie]] {nights} Nächte in den Bergen und "
        "[[begrüßt||begrüßen]] das neue Jahr mit Feuerwerk über dem Tal.",
    ],
    "ost": [
        "Ostern ist die Zeit für Frühlingsskilauf: Sonne, lange Tage und Pisten, die morgens griffig und mittags sulzig "
        "sind. Die <strong>Osterreise</strong> {in_dest} führt in ein schneesicheres Gebiet, in dem die Saison noch lange "
        "nicht vorbei ist.",
        "Mit der <strong>Osterreise</strong> {in_dest} [[nutzt du||nutzen Sie]] die Osterferien für eine Woche im Schnee. "
        "Die Höhenlage sorgt dafür, dass auch im April noch bis ins Tal gefahren werden kann.",
    ],
    "fam": [
        "Die <strong>Familienwoche</strong> {in_dest} ist auf Eltern mit Kindern zugeschnitten: kurze Wege zur Skischule, "
        "kinderfreundliche Unterkünfte und Reisetermine in den Schulferien.",
        "Gemeinsam Ski fahren lernen, gemeinsam die erste rote Piste schaffen: In der <strong>Familienwoche</strong> "
        "{in_dest} haben Sie Zeit füreinander, während die Kinder vormittags in der Skischule gut aufgehoben sind.",
    ],
    "uni": [
        "Die <strong>Uni-Skireise</strong> {in_dest} ist die günstige Woche im Schnee für Studierende: Abfahrt in den "
        "Semesterferien, Apartments für die ganze WG und ein Programm, bei dem niemand früh ins Bett muss.",
        "Nach der Klausurenphase direkt in den Schnee: Mit der <strong>Uni-Skireise</strong> {in_dest} fährst du mit "
        "Studierenden aus ganz Deutschland eine Woche in die Berge.",
    ],
    "firm": [
        "Die <strong>Firmenreise</strong> {in_dest} bringt Ihr Team für {nights} Nächte in die Berge. Wir organisieren "
        "Anreise, Unterkunft, Skipass und Rahmenprogramm – Sie kümmern sich nur noch um die Teilnehmerliste.",
        "Ob Kick-off, Incentive oder Abteilungsausflug: Bei der <strong>Firmenreise</strong> {in_dest} stehen gemeinsame "
        "Erlebnisse im Mittelpunkt, vom Skirennen mit Zeitnahme bis zum Hüttenabend.",
    ],
    "kurs": [
        "Die <strong>Skikurs-Woche</strong> {in_dest} richtet sich an alle, die Skifahren lernen oder ihre Technik "
        "verbessern möchten. Der Skikurs mit staatlich geprüften Skilehrern ist im Reisepreis enthalten.",
        "In der <strong>Skikurs-Woche</strong> {in_dest} fahren Sie an fünf Vormittagen in kleinen Gruppen nach Können – "
        "vom ersten Schneepflug bis zum sauberen Carvingschwung.",
    ],
}

SPECIAL_INTROS = {
    "SZTDA": "Die <strong>Teamer-Schulung</strong> in Les Deux Alpes bereitet neue Snowzone-Teamer auf ihre erste Saison "
             "vor: Aufsichtspflicht, Erste Hilfe im Schnee, Lawinenkunde und Methodik für Ski- und Snowboardgruppen. "
             "Die Teilnahme ist nur nach Bewerbung und Einladung möglich.",
    "SGGER": "Diese <strong>geschlossene Gruppenreise</strong> organisieren wir exklusiv für den Skiclub Rheinland e. V. "
             "Die Anmeldung läuft über den Verein; eine Buchung über unsere Website ist nicht möglich.",
    "SBWSF": "Die <strong>Boarderweek Saas-Fee</strong> ist neu im Programm: eine Woche im Frühjahr auf dem Gletscher, "
             "wenn im Tal schon die Wiesen grün werden. Termine und Preise stehen noch nicht fest – eine Buchung ist "
             "derzeit nicht möglich.",
}

BOARD_SENTENCE = {
    "4xAE": "An vier Abenden gibt es ein Drei-Gänge-Menü im Restaurant der Unterkunft – in der Ausschreibung als "
            "„4x Abendessen“ ausgewiesen; Frühstück ist nicht inklusive.",
    "HP": "Die Verpflegung ist Halbpension (HP) mit Frühstücksbuffet und Abendessen.",
    "VP": "[[Du bekommst||Sie bekommen]] Vollpension (VP): Frühstück, ein Lunchpaket für die Piste und Abendessen.",
    "FR": "Frühstück ist inklusive; abends [[gehst du||gehen Sie]] in einem der Restaurants im Ort essen.",
    "SV": "[[Du verpflegst dich||Sie verpflegen sich]] selbst; die Apartments haben eine Küchenzeile, ein Supermarkt ist "
          "in wenigen Minuten erreichbar.",
    "6xAE": "„6x Abendessen“ im Partnerrestaurant ist inklusive, das Frühstück [[machst du dir||bereiten Sie sich]] im "
            "Apartment selbst zu.",
}

BOARD_LABEL = {
    "4xAE": "4x Abendessen (Drei-Gänge-Menü)", "HP": "Halbpension (HP)", "VP": "Vollpension (VP) mit Lunchpaket",
    "FR": "Frühstück", "SV": "Selbstverpflegung", "6xAE": "6x Abendessen im Partnerrestaurant",
}

CONCEPT_EXTRA = {
    "bw": "Zum Programm gehören ein Welcome-Abend, ein Contest im Snowpark und die legendäre Abschlussparty. "
          "Snowboardkurse für Anfänger kannst du dazubuchen.",
    "kurs": "Der Skikurs umfasst fünf Vormittage à vier Stunden; am letzten Tag gibt es ein Abschlussrennen mit "
            "Siegerehrung. Leihski und Helm können bei der Buchung reserviert werden.",
    "fam": "Kinder unter 6 Jahren fahren im Zimmer der Eltern zum ermäßigten Preis mit. Der Kinderskikurs ist nicht "
           "inklusive und kann vorab reserviert werden.",
    "camp": "Die Teamer sind ausgebildete Ski- und Snowboardlehrer und rund um die Uhr ansprechbar. Alkohol ist im Camp "
            "tabu, dafür gibt es Hüttenabend, Fackelwanderung und Video-Session.",
    "uni": "Mit gültigem Studierendenausweis gibt es in vielen Skigebieten einen ermäßigten Skipass. Après-Ski-Partys, "
           "Pubquiz und ein Schlittenabend stehen auf dem Programm.",
    "sil": "Das Silvester-Menü am 31. Dezember ist inklusive; Getränke sind nicht im Preis enthalten.",
    "ost": "Am Ostersonntag wartet an der Talstation eine kleine Überraschung auf [[dich||Sie]].",
    "firm": "Auf Wunsch organisieren wir ein Skirennen mit Zeitnahme, eine Schneeschuhwanderung oder einen Hüttenabend "
            "mit Live-Musik. Die Rechnung stellen wir zentral auf Ihr Unternehmen aus.",
    "so": "Die Opening-Partys und Konzerte im Ort sind frei zugänglich; für einige Konzerte am Berg braucht man einen "
          "gültigen Skipass.",
    "we": "Das Gepäck bleibt am Anreisetag im Bus, bis die Zimmer bezugsfertig sind; am Abreisetag [[kannst du||können Sie]] "
          "noch bis zum Liftschluss fahren.",
}

NOT_INCLUDED = [
    "Nicht inklusive sind die Kurtaxe, die vor Ort bezahlt wird, die Kaution für die Unterkunft und Leihmaterial.",
    "Nicht im Preis enthalten: Kurtaxe, Endreinigung, Skiverleih und eine Reiserücktrittsversicherung, die wir "
    "dringend empfehlen.",
    "Bitte beachten: Kurtaxe und Kaution sind nicht im Preis enthalten und werden bei der Ankunft in bar bezahlt.",
    "Kurtaxe, Getränke zum Abendessen und Zustiegszuschläge einzelner Abfahrtsorte sind nicht inklusive.",
]


def fill(text: str, p: dict) -> str:
    text = V(text, p["site"])
    return text.format(in_dest=p["in_dest"], label=p["label"], nights=p["nights"], sp=p["skipass"],
                       area=p["area"], title=p["title"])


def product_teaser(p: dict) -> str:
    if "teaser" in p["opt"]:
        return p["opt"]["teaser"]
    r = rng_for("teaser", p["uid"])
    t = fill(r.choice(TEASERS[p["concept"]]), p)
    if p["noskipass"]:
        t = t.rstrip(".") + " – Bus und Unterkunft, ohne Skipass."
    return t


def resort_paragraph(p: dict, r: random.Random) -> str:
    kind, key = p["refs"][0]
    if kind == "city":
        t = T[key]
        facts = t["facts"][:]
        r.shuffle(facts)
        templ = r.choice([
            "{f0} {f1} Das Skigebiet {area} bietet rund {km} Pistenkilometer zwischen {alt} und {top} Metern.",
            "{f0} Mit rund {km} Kilometern Piste und einer Bergstation auf {top} Metern gehört {area} zu den "
            "bekanntesten Skigebieten {gen}. {f1}",
            "{f0} Der Ort liegt auf {alt} Metern, die Lifte führen bis auf {top} Meter. {f1}",
        ])
        text = templ.format(f0=facts[0], f1=facts[1], area=t["area"], km=num(t["km"]), alt=num(t["alt"]),
                            top=num(t["top"]), gen=C[t["country"]]["gen"])
        if len(p["refs"]) > 1:
            t2 = T[p["refs"][1][1]]
            text += " " + t2["facts"][0]
        return text
    if kind == "region":
        reg = R[key]
        towns = [T[c]["title"] for c in p["hotel_cities"]]
        return (f"{reg['desc']} Unsere Unterkünfte liegen in {join_de(towns)}; von dort erreicht man das ganze "
                f"Skigebiet ohne Auto.")
    towns = [T[c]["title"] for c in p["hotel_cities"]]
    return (f"Das Ziel {p['in_dest']} wählen Sie mit uns gemeinsam aus: Zur Auswahl stehen {join_de(towns, 'oder')}. "
            + " ".join(T[c]["facts"][0] for c in p["hotel_cities"]))


def services_paragraph(p: dict, r: random.Random) -> str:
    stops = [s for s, _ in route_for(p)]
    zust = join_de(r.sample(stops, 3) if len(stops) > 3 else stops)
    bus = r.choice([
        "Im Reisepreis enthalten sind die Busanreise im modernen Fernreisebus ab [[deinem||Ihrem]] Zustieg und "
        "{nights} Übernachtungen in der gebuchten Unterkunft.",
        "Zum Paket gehören die Hin- und Rückfahrt im Reisebus mit Zustieg unter anderem in {zust} und {nights} Nächte "
        "vor Ort. Eine Reiseleitung begleitet die Gruppe während der ganzen Reise.",
        "Die Anreise erfolgt im Nachtbus; zusteigen [[kannst du||können Sie]] zum Beispiel in {zust}. Vor Ort "
        "[[wohnst du||wohnen Sie]] {nights} Nächte in der gebuchten Unterkunft.",
    ])
    bus = V(bus, p["site"]).format(nights=p["nights"], zust=zust)
    board = V(BOARD_SENTENCE[p["board"]], p["site"])
    if p["noskipass"]:
        sk = V("Diese Variante [[buchst du||buchen Sie]] <strong>ohne Skipass</strong> – ideal, wenn [[du||Sie]] schon "
               "einen Saisonpass [[hast||haben]] oder lieber Skitouren [[gehst||gehen]]. Den Skipass für {area} "
               "[[kannst du||können Sie]] vor Ort an der Kasse kaufen; er ist nicht im Preis enthalten.",
               p["site"]).format(area=p["area"])
    else:
        sk = r.choice([f"Der {p['skipass']}-Tage-Skipass für {p['area']} ist inklusive.",
                       f"Inklusive ist außerdem der Skipass für {p['skipass']} Tage ({p['area']}).",
                       f"Der Skipass für {p['area']} gilt {p['skipass']} Tage und ist im Reisepreis enthalten."])
    return f"{bus} {board} {sk}"


def hotels_paragraph(p: dict, r: random.Random) -> str:
    hs = [H[c] for c in p["hotels"]]
    names = [f"{im(h)} {h['title']}" for h in hs]
    if len(hs) == 1:
        h = hs[0]
        first = V(f"[[Du wohnst||Sie wohnen]] {names[0]} ({HOTEL_TYPES[h['type']]}), "
                  f"{num(h['facts']['distanceLiftM'])} Meter vom nächsten Lift.", p["site"])
        if h["facts"]["distanceLiftM"] == 0:
            first = V(f"[[Du wohnst||Sie wohnen]] {names[0]} ({HOTEL_TYPES[h['type']]}) direkt an der Piste.", p["site"])
    else:
        first = V(f"[[Du wohnst||Sie wohnen]] wahlweise {join_de(names, 'oder')}.", p["site"])
    rooms = []
    if any(h["type"] in (2, 4, 5) for h in hs):
        rooms.append(r.choice([
            "In den Häusern mit Zimmern gibt es Doppelzimmer (DZ) und Mehrbettzimmer; Einzelzimmer (EZ) auf Anfrage "
            "gegen Zuschlag.",
            "Gebucht werden DZ und Mehrbettzimmer, ein EZ ist nur begrenzt verfügbar.",
        ]))
    if any(h["type"] in (1, 3) for h in hs):
        rooms.append(r.choice([
            "Die Apartments sind für 4 bis 6 Personen ausgelegt; Einzelbelegung ist nicht möglich.",
            "In den Apartments und Ferienwohnungen wird pro Person gebucht – wer allein reist, teilt sich die "
            "Wohnung mit anderen Gästen.",
        ]))
    hl = hs[0]
    extra = ""
    if hl["facts"]["sauna"]:
        extra = f" {Art(hl)} {hl['title']} {verb(hl, 'hat', 'haben')} eine Sauna für den Feierabend."
    return first + " " + " ".join(rooms) + extra


def product_description(p: dict) -> str:
    r = rng_for("product-desc", p["uid"])
    intro = SPECIAL_INTROS.get(p["code"]) or fill(r.choice(INTROS[p["concept"]]), p)
    texts = [intro, resort_paragraph(p, r), services_paragraph(p, r), hotels_paragraph(p, r)]
    if p["code"] not in SPECIAL_INTROS or p["code"] == "SBWSF":
        texts.append(V(CONCEPT_EXTRA[p["concept"]], p["site"]))
    hint = r.choice(NOT_INCLUDED)
    if "price" in p["opt"]:
        hint += V(f" Frühbucher zahlen ab {p['opt']['price']} € pro Person im DZ (Stand: Katalog 2026/27).", p["site"])
    texts.append(hint)
    return paras(texts)


def product_faqs(p: dict) -> list[dict]:
    r = rng_for("faq", p["uid"])
    s = p["site"]
    stops = [st for st, _ in route_for(p)]
    pool = []
    if p["noskipass"]:
        pool.append(("Ist der Skipass inklusive?",
                     "Nein, diese Reise ist ohne Skipass. Den Skipass [[kannst du||können Sie]] vor Ort an der Kasse "
                     "oder vorab online kaufen; mit Studierendenausweis gibt es oft Rabatt."))
    else:
        pool.append(("Ist der Skipass inklusive?",
                     f"Ja, der {p['skipass']}-Tage-Skipass für {p['area']} ist im Reisepreis enthalten. "
                     "[[Du bekommst||Sie bekommen]] ihn bei der Ankunft von der Reiseleitung."))
        pool.append(("Kann ich die Reise auch ohne Skipass buchen?",
                     "Bei den meisten Terminen ja: [[Wähle||Wählen Sie]] bei der Buchung die Option „ohne Skipass“, "
                     "der Preis reduziert sich entsprechend. Die Option ist nicht bei allen Unterkünften verfügbar."))
    pool.append(("Wo kann ich zusteigen?",
                 f"Die Busse halten unter anderem in {join_de(stops)}. Für einige Zustiegsorte fällt ein Zuschlag an; "
                 "die genauen Abfahrtszeiten stehen in den Reiseunterlagen."))
    pool.append(("Was ist nicht im Preis enthalten?",
                 "Nicht im Preis enthalten sind Kurtaxe, Kaution, Leihmaterial und die Reiseversicherung. Die Kaution "
                 "(meist 100 € pro Zimmer oder Apartment) [[bekommst du||bekommen Sie]] bei der Abreise zurück."))
    if any(H[c]["type"] in (2, 4, 5) for c in p["hotels"]):
        pool.append(("Gibt es Einzelzimmer?",
                     "Einzelzimmer (EZ) gibt es nur in wenigen Häusern und gegen Zuschlag. Wer allein reist, kann auch "
                     "ein Bett im DZ oder Mehrbettzimmer mit anderen Gästen buchen."))
    pool.append(("Wie viel Gepäck darf ich mitnehmen?",
                 "Pro Person ein Koffer oder eine Reisetasche bis 20 kg, ein Handgepäck und ein Paar Ski oder ein "
                 "Snowboard in einer Tasche."))
    pool.append(("Kann ich vor Ort Ski oder Snowboard leihen?",
                 "Ja, unser Partner-Verleih im Ort gibt Rabatt auf Leihmaterial. [[Reserviere||Reservieren Sie]] am "
                 "besten schon bei der Buchung, dann liegt die Ausrüstung bei der Ankunft bereit."))
    if p["concept"] == "kurs":
        pool.append(("Für wen ist der Skikurs geeignet?",
                     "Für Anfänger ohne Vorkenntnisse ebenso wie für Fortgeschrittene. Am ersten Morgen werden die "
                     "Gruppen nach Können eingeteilt, maximal zehn Personen pro Skilehrer."))
    elif p["concept"] in ("camp",):
        pool.append(("Wer betreut die Jugendlichen?",
                     "Unsere Teamer sind mindestens 19 Jahre alt, haben eine Ski- oder Snowboardlehrer-Ausbildung "
                     "und einen Erste-Hilfe-Kurs. Auf acht Teilnehmende kommt ein Teamer."))
    else:
        pool.append(("Gibt es Skikurse?",
                     "Skikurse und Snowboardkurse sind nicht inklusive, können aber gegen Aufpreis bei der Buchung "
                     "reserviert werden."))
    if p["board"] in ("SV", "FR"):
        pool.append(("Kann ich Halbpension dazubuchen?",
                     "In einigen Unterkünften ja: Halbpension (HP) mit Abendessen im Partnerrestaurant ist gegen "
                     "Aufpreis buchbar. Vollpension (VP) bieten wir auf dieser Reise nicht an."))
    if p["country"] == "it":
        pool.append(("Brauche ich in Italien eine Versicherung für die Piste?",
                     "Ja, in Italien ist eine Haftpflichtversicherung für Skifahrer Pflicht. Sie kann an der Skipasskasse "
                     "für wenige Euro pro Tag abgeschlossen werden."))
    if p["country"] == "ch":
        pool.append(("In welcher Währung zahle ich in der Schweiz?",
                     "In Schweizer Franken; Karten werden fast überall akzeptiert, Euro oft nur mit schlechtem Kurs."))
    first = pool[0]
    rest = pool[1:]
    r.shuffle(rest)
    n = r.randint(2, 5)
    chosen = [first] + rest[: n - 1]
    return [{"question": q, "answer": f"<p>{V(a, s)}</p>"} for q, a in chosen]


def build_product_records() -> None:
    for p in P:
        p["teaser"] = product_teaser(p)
        p["description"] = product_description(p)
        p["faqs"] = product_faqs(p)
        dest_refs = []
        for kind, key in p["refs"]:
            uid = {"city": T, "region": R, "country": C}[kind][key]["uid"]
            dest_refs.append(ref(kind, uid))
        record("product", p["uid"], {
            "code": p["code"],
            "title": p["title"],
            "searchable": p["searchable"],
            "unbookable": p["unbookable"],
            "destinations": dest_refs,
            "concept": ref("concept", K[p["concept"]]["uid"]),
            "hotels": [ref("hotel", H[c]["uid"]) for c in p["hotels"]],
            "teaser": p["teaser"],
            "description": p["description"],
            "faqs": p["faqs"],
        })


def city_description(t: dict) -> str:
    r = rng_for("city-desc", t["key"])
    f = t["facts"]
    second = r.choice([
        "Das Skigebiet {area} umfasst rund {km} Pistenkilometer; der Ort liegt auf {alt} Metern, die höchste "
        "Bergstation auf {top} Metern.",
        "Mit {km} Pistenkilometern im Gebiet {area} und Liften bis auf {top} Meter ist für jedes Können etwas dabei.",
    ]).format(area=t["area"], km=num(t["km"]), alt=num(t["alt"]), top=num(t["top"]))
    return paras([f"{f[0]} {f[1]}", f"{second} {f[2]}"])


def build_geo_concept_records() -> None:
    for c in C.values():
        data = {"title": c["title"], "description": paras(COUNTRY_DESC[c["key"]])}
        record("country", c["uid"], data)
    for reg in R.values():
        data = {"title": reg["title"], "parent": ref("country", C[reg["country"]]["uid"])}
        if reg["desc"]:
            data["description"] = paras([reg["desc"]])
        record("region", reg["uid"], data)
    for t in T.values():
        data = {"title": t["title"], "parent": ref("region", R[t["region"]]["uid"])}
        if t["key"] not in CITIES_NO_DESC:
            data["description"] = city_description(t)
        record("city", t["uid"], data)
    for k in K.values():
        record("concept", k["uid"], {"title": k["title"], "description": paras(CONCEPT_DESC[k["key"]])})


# --------------------------------------------------------------------------------------------
# HTML: the site chrome around every page (dropped by concierge's converter)
# --------------------------------------------------------------------------------------------

def chrome(site: str, title: str, crumbs: list[str], main_inner: str, *, aside: bool = True,
           body_class: str = "page") -> str:
    info = SITE_INFO[site]
    st = SITE[site]["title"]
    nav = "".join(f'<li><a href="{href}">{esc(label)}</a></li>' for label, href in info["nav"])
    crumb_html = '<li><a href="/">Startseite</a></li>' + "".join(
        f"<li>{esc(c)}</li>" for c in crumbs) + f'<li aria-current="page">{esc(title)}</li>'
    side = ""
    if aside:
        side = (
            '<aside class="sidebar">'
            f'<div class="contact-box"><h3>Fragen zur Reise?</h3><p>{V("[[Ruf uns an||Rufen Sie uns an]]", site)}: '
            f'<a href="tel:{re.sub(r"[^0-9+]", "", info["phone"])}">{info["phone"]}</a><br>Mo–Fr 9–18 Uhr</p>'
            f'<p><a href="mailto:{info["mail"]}">{info["mail"]}</a></p></div>'
            '<div class="trust"><img src="/fileadmin/siegel/sicherungsschein.svg" alt="Sicherungsschein"> '
            "Insolvenzversichert nach § 651r BGB</div>"
            "</aside>"
        )
    return f"""<!DOCTYPE html>
<html lang="de">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)} | {esc(st)}</title>
<meta name="generator" content="TYPO3 CMS">
<link rel="stylesheet" href="/typo3conf/ext/sitepackage/Resources/Public/Css/{site}.min.css?1730811245">
<style>.cookie-banner{{position:fixed;bottom:0;left:0;right:0;z-index:999}}.visually-hidden{{position:absolute;clip:rect(0 0 0 0)}}</style>
<script>window.dataLayer=window.dataLayer||[];function gtag(){{dataLayer.push(arguments);}}gtag('consent','default',{{'analytics_storage':'denied'}});</script>
<script async src="/typo3temp/assets/compressed/merged-{slug(site)}-7f3a9c.js"></script>
</head>
<body class="{body_class} site-{site}">
<div class="cookie-banner" id="cookie-banner" role="dialog" aria-label="Cookie-Einstellungen">
<p>Wir verwenden Cookies, um unsere Website für Sie zu optimieren und die Nutzung zu analysieren. Mit „Alle akzeptieren“ stimmen Sie der Verwendung aller Cookies zu. Details finden Sie in unserer <a href="/datenschutz/">Datenschutzerklärung</a>.</p>
<button type="button" data-consent="all">Alle akzeptieren</button> <button type="button" data-consent="necessary">Nur notwendige</button>
</div>
<header class="page-header">
<a class="logo" href="/"><img src="/fileadmin/logos/{site}.svg" alt="{esc(st)} – Startseite" width="180" height="48"></a>
<p class="claim">{esc(info["claim"])}</p>
<nav class="main-nav" aria-label="Hauptmenü"><ul>{nav}</ul></nav>
<a class="hotline" href="tel:{re.sub(r"[^0-9+]", "", info["phone"])}">Hotline {info["phone"]}</a>
</header>
<main id="content">
<nav class="breadcrumb" aria-label="Brotkrumen"><ol>{crumb_html}</ol></nav>
<article class="content">
{main_inner}
</article>
{side}
</main>
<footer class="page-footer">
<div class="footer-address"><strong>{esc(info["company"])}</strong><br>{esc(info["street"])}<br>{esc(info["town"])}<br>Telefon {info["phone"]}</div>
<ul class="footer-links"><li><a href="/impressum/">Impressum</a></li><li><a href="/datenschutz/">Datenschutz</a></li><li><a href="/agb/">AGB</a></li><li><a href="/kontakt/">Kontakt</a></li></ul>
<form class="newsletter" action="/newsletter/" method="post"><label for="nl-mail">Newsletter: Restplätze und Frühbucheraktionen</label><input id="nl-mail" type="email" name="email" placeholder="E-Mail-Adresse"><button type="submit">Anmelden</button></form>
<p class="copyright">© 2026 {esc(info["company"])}</p>
</footer>
<script src="/typo3conf/ext/sitepackage/Resources/Public/JavaScript/main.min.js?1730811245"></script>
<script>document.querySelectorAll('[data-consent]').forEach(function(b){{b.addEventListener('click',function(){{document.getElementById('cookie-banner').remove();}});}});</script>
</body>
</html>
"""


def h(tag: str, text: str) -> str:
    return f"<{tag}>{text}</{tag}>"


def ul(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{i}</li>" for i in items) + "</ul>"


def table(head: list[str], rows: list[list[str]], caption: str | None = None) -> str:
    cap = f"<caption>{caption}</caption>" if caption else ""
    th = "".join(f"<th>{c}</th>" for c in head)
    trs = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="contenttable">{cap}<thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>'


def entity_encode(fragment: str) -> str:
    """An editor's old content: umlauts, ß and quotes as named entities, some spaces as &nbsp;."""
    out = []
    for ch in fragment:
        name = codepoint2name.get(ord(ch))
        out.append(f"&{name};" if name and ord(ch) > 127 else ch)
    text = "".join(out)
    return text.replace("4x Abendessen", "4x&nbsp;Abendessen").replace(" Uhr", "&nbsp;Uhr")


# --------------------------------------------------------------------------------------------
# Page bodies: products
# --------------------------------------------------------------------------------------------

DEPART = [
    "Am {wd}nachmittag starten die Busse an den Zustiegsorten. Unterwegs gibt es regelmäßige Pausen an Raststätten; "
    "die Nacht [[verbringst du||verbringen Sie]] im Reisebus mit verstellbaren Schlafsesseln.",
    "Abfahrt am {wd} ab den Zustiegsorten, die Reiseleitung begrüßt [[dich||Sie]] im Bus. Nach der letzten Pause "
    "wird das Licht gedimmt – am besten [[nimmst du||nehmen Sie]] ein Nackenkissen mit.",
    "Am {wd}abend geht es los. Die Busse sammeln die Gruppe an den Zustiegsorten ein und fahren über Nacht {in_dest}.",
]
ARRIVE = [
    "Ankunft am frühen Morgen. Das Gepäck kommt ins Depot, und schon geht es auf die Piste. Die Zimmer sind ab 17 Uhr "
    "bezugsfertig. {note}",
    "Gegen 8 Uhr erreicht der Bus {label}. Nach einem Kaffee [[startest du||starten Sie]] in den ersten Skitag; am "
    "Nachmittag werden die Unterkünfte bezogen. {note}",
    "Der Bus kommt am Morgen an. [[Du ziehst dich||Sie ziehen sich]] im Gepäckraum der Unterkunft um und "
    "[[nutzt||nutzen]] gleich den ersten Skitag, bevor am späten Nachmittag der Check-in ansteht. {note}",
]
SKIDAY = [
    "Skitag {in_dest}. Die Reiseleitung bietet eine geführte Runde durch das Skigebiet an, für alle, die sich noch "
    "nicht auskennen. Abends trifft sich die Gruppe {event}.",
    "Ganzer Skitag. Mittags lohnt sich eine Pause auf einer der Hütten am Berg; abends trifft sich die Gruppe {event}.",
    "Heute ist Zeit für die langen Abfahrten. {fact} Abends trifft man sich {event}.",
]
EVENT = {
    "bw": "zum Welcome-Abend in der Bar", "so": "zur Opening-Party im Ort", "we": "in der Après-Ski-Bar an der Talstation",
    "firm": "zum Hüttenabend mit Live-Musik", "sil": "zum gemeinsamen Abendessen", "camp": "zum Spieleabend im Haus",
    "uni": "zum Pubquiz", "ost": "auf der Sonnenterrasse", "fam": "zum Rodelabend", "kurs": "zur Videoanalyse des Skikurses",
}
WEEK_PROGRAM = {
    "bw": "Am Dienstag steigt der Contest im Snowpark, am Donnerstag der Hüttenabend und am letzten Abend die "
          "Abschlussparty.",
    "camp": "Vormittags Coaching in Gruppen nach Können, nachmittags freies Fahren mit den Teamern, abends "
            "Video-Session, Spieleabend und eine Fackelwanderung.",
    "kurs": "Jeden Vormittag von 10 bis 14 Uhr Skikurs in kleinen Gruppen, nachmittags freies Fahren oder "
            "Entspannung. Am letzten Kurstag gibt es das Abschlussrennen mit Siegerehrung.",
    "fam": "Die Kinder sind vormittags in der Skischule, die Eltern haben Zeit für eigene Abfahrten. Am Mittwoch gibt es "
           "einen Rodelabend für die ganze Familie.",
    "uni": "Tagsüber Piste, abends Programm: Welcome-Party, Pubquiz, Schlittenabend und zum Abschluss die Uni-Party.",
    "sil": "Am 31. Dezember gibt es das Silvester-Menü, um Mitternacht Sekt und Feuerwerk über dem Tal. Am Neujahrstag "
           "sind die Pisten morgens fast leer.",
    "ost": "Die Sonne steht im April hoch: früh auf die Piste, mittags auf die Terrasse. Am Ostersonntag gibt es eine "
           "Überraschung an der Talstation.",
}
DEPART_HOME = [
    "Check-out bis 10 Uhr, das Gepäck kommt in den Bus. Bis zur Abfahrt am späten Nachmittag [[kannst du||können Sie]] "
    "noch Ski fahren; umziehen kann man sich in den Duschräumen der Unterkunft.",
    "Letzter Skitag. Die Zimmer werden am Morgen geräumt, der Bus fährt gegen 17 Uhr zurück.",
    "Am Abreisetag heißt es früh packen: Check-out um 9:30 Uhr, danach ist Zeit für eine letzte Abfahrt. Die "
    "Rückfahrt beginnt am frühen Abend.",
]
ARRIVE_HOME = [
    "Ankunft an den Zustiegsorten in den frühen Morgenstunden.",
    "Der Bus erreicht die Zustiegsorte in umgekehrter Reihenfolge, die ersten gegen 4 Uhr, die letzten gegen 9 Uhr.",
    "Rückkehr am Morgen; wer weiter mit der Bahn fährt, sollte einen flexiblen Anschluss wählen.",
]
GOOD_TO_KNOW = [
    "Im Bus ist Platz für ein Paar Ski oder ein Snowboard pro Person; bitte in einer Tasche verpacken.",
    "Die Zimmer sind am Anreisetag meist erst ab 17 Uhr bezugsfertig. Skikleidung gehört daher ins Handgepäck.",
    "Die Reiseleitung ist über eine Notfallnummer erreichbar, die [[du||Sie]] mit den Reiseunterlagen "
    "[[erhältst||erhalten]].",
    "Die Reiseunterlagen kommen etwa zehn Tage vor der Abfahrt per E-Mail.",
    "Eine Europäische Krankenversicherungskarte (EHIC) ist Pflicht; eine Auslandskrankenversicherung empfehlen wir "
    "dringend.",
]
GOOD_TO_KNOW_COUNTRY = {
    "fr": "In Frankreich heißt der Skipass „Forfait“; bei Verlust hilft die Reiseleitung, einen Ersatz zu bekommen.",
    "it": "In Italien gilt auf der Piste Helmpflicht für Kinder und Jugendliche und Versicherungspflicht für alle "
          "Skifahrer.",
    "ch": "In der Schweiz wird in Franken bezahlt; die Busse fahren über Zürich, an der Grenze wird kontrolliert.",
    "at": "In Österreich gilt für Kinder unter 15 Jahren auf der Piste Helmpflicht.",
    "de": "Die Anreise ist kurz – Parkplätze an den Zustiegsorten sind trotzdem knapp, lieber mit Bahn oder Bus kommen.",
}


def fmt(text: str, p: dict, **kw) -> str:
    return V(text, p["site"]).format(in_dest=p["in_dest"], label=p["label"], **kw)


def product_page(p: dict, variant: str = "reiseverlauf") -> str:
    r = rng_for("product-page", p["uid"], variant)
    k = K[p["concept"]]
    s = p["site"]
    parts = [h("h1", esc(p["title"]))]
    if variant == "unbookable":
        parts.append(f'<p class="lead">{esc(p["teaser"])}</p>')
        parts.append(p["description"])
        parts.append(h("h2", "Vormerken"))
        parts.append(paras([V(
            "Sobald die Termine feststehen, informieren wir alle, die sich auf die Interessentenliste eingetragen "
            "haben. [[Schreib uns||Schreiben Sie uns]] dazu einfach eine E-Mail mit dem Betreff „Saas-Fee“. "
            "Bis dahin [[kannst du||können Sie]] die Reise nicht buchen; auch telefonisch nehmen wir noch keine "
            "Reservierungen an.", s),
            "Geplant ist eine Woche mit sieben Nächten im Gästehaus Allalin oder in den Apartments Gletschergarten, "
            "Busanreise über Zürich und ein 6-Tage-Skipass für das Gletscherskigebiet."]))
        return "\n".join(parts)
    lead = r.choice([
        "Hier [[findest du||finden Sie]] den Reiseverlauf, die Leistungen und alle Zustiegsorte im Überblick.",
        "Alles Wichtige zur Reise auf einen Blick: Ablauf, Leistungen, Zustiege und was [[du||Sie]] sonst wissen "
        "[[solltest||sollten]].",
        "Von der Abfahrt bis zur Rückkehr: So läuft die Reise ab.",
    ])
    parts.append(f'<p class="lead">{esc(p["teaser"])} {V(lead, s)}</p>')
    if variant == "leistungen":
        parts[0] = h("h1", esc(p["title"]) + " – Leistungen &amp; Preise")
        parts[1] = f'<p class="lead">Alle Leistungen, Preise und Zuschläge der {esc(p["title"])} auf einen Blick.</p>'
        rows = [["Busreise", "Hin- und Rückfahrt im Fernreisebus, Zustieg in Köln, Frankfurt, Karlsruhe, Freiburg oder Basel"],
                ["Übernachtung", f"{p['nights']} Nächte, wahlweise Sportclub, Residenz oder Hotel"],
                ["Verpflegung", "Halbpension (HP) im Sportclub und im Hotel Chamois d'Or, Selbstverpflegung in der Résidence Val Chavière"],
                ["Skipass", f"{p['skipass']}-Tage-Skipass Les 3 Vallées (600 km)"],
                ["Programm", "Welcome-Abend, Contest im Snowpark, Hüttenabend, Abschlussparty"],
                ["Reiseleitung", "deutschsprachig, vor Ort im Sportclub Le Schuss"]]
        parts.append(h("h2", "Im Preis enthalten"))
        parts.append(table(["Leistung", "Details"], rows))
        parts.append(h("h2", "Preise und Zuschläge"))
        parts.append(paras([
            "Die Boarderweek Val Thorens gibt es ab 649 € pro Person im Mehrbettzimmer im Sportclub Le Schuss. "
            "Im Hotel Chamois d'Or kostet der Platz im DZ mit HP ab 899 €, das EZ gibt es nur auf Anfrage gegen "
            "einen Zuschlag von 35 € pro Nacht.",
            "Die Variante ohne Skipass ist 259 € günstiger. Zustiegszuschläge: Basel und Freiburg 0 €, Karlsruhe "
            "und Frankfurt 19 €, Köln 29 € pro Strecke. Alle Preise Stand Katalog 2026/27; verbindlich ist der "
            "Preis in der Buchungsstrecke."]))
        parts.append(h("h2", "Nicht im Preis enthalten"))
        parts.append(ul(["Kurtaxe (ca. 2,50 € pro Person und Nacht)", "Kaution 150 € pro Apartment, in bar",
                         "Endreinigung der Apartments in der Résidence Val Chavière (50 €)",
                         "Snowboardkurs für Anfänger (3 Vormittage, 119 €)", "Reiserücktrittsversicherung"]))
        return "\n".join(parts)
    # the standard detail page: itinerary, services, pickups, exclusions, good to know
    wd = k["weekday"]
    parts.append(h("h2", "Reiseverlauf"))
    day_no = 1
    days: list[tuple[str, str]] = []
    days.append((f"Tag {day_no} – {WEEKDAYS[wd]}: Abfahrt", fmt(r.choice(DEPART), p, wd=WEEKDAYS[wd])))
    note = ("Wer keinen Skipass hat, kauft ihn an der Kasse der Talstation; die Reiseleitung zeigt den Weg."
            if p["noskipass"] else "Die Reiseleitung verteilt die Skipässe direkt am Bus.")
    arrive = V(r.choice(ARRIVE), s).format(label=p["label"], note=note)
    days.append((f"Tag {day_no + 1} – {WEEKDAYS[(wd + 1) % 7]}: Ankunft {p['in_dest']}", arrive))
    nights = p["nights"]
    facts = T[p["city"]]["facts"]
    if nights >= 5:
        program = V(WEEK_PROGRAM.get(p["concept"], WEEK_PROGRAM["bw"]), s)
        days.append((f"Tag 3 bis {nights + 1}: Skitage",
                     f"{r.choice(facts)} {program} Die Reiseleitung ist jeden Abend in der Unterkunft ansprechbar."))
        day_end = nights + 1
    else:
        for i in range(2, nights + 1):
            txt = fmt(r.choice(SKIDAY), p, event=EVENT[p["concept"]], fact=r.choice(facts))
            days.append((f"Tag {i + 1} – {WEEKDAYS[(wd + i) % 7]}: Skitag", txt))
        day_end = nights + 1
    days.append((f"Tag {day_end + 1} – {WEEKDAYS[(wd + day_end) % 7]}: Abreise", V(r.choice(DEPART_HOME), s)))
    days.append((f"Tag {day_end + 2} – {WEEKDAYS[(wd + day_end + 1) % 7]}: Ankunft", r.choice(ARRIVE_HOME)))
    for title, txt in days:
        parts.append(h("h3", title))
        parts.append(h("p", txt))
    parts.append(h("h2", "Leistungen"))
    rows = [["Busreise", "Hin- und Rückfahrt im Fernreisebus mit WC, Klimaanlage und Schlafsesseln"],
            ["Übernachtung", f"{nights} Nächte in der gebuchten Unterkunft"],
            ["Verpflegung", BOARD_LABEL[p["board"]]],
            ["Skipass", "nicht enthalten (Variante ohne Skipass)" if p["noskipass"]
             else f"{p['skipass']}-Tage-Skipass {p['area']}"],
            ["Reiseleitung", "deutschsprachige Reiseleitung vor Ort"]]
    extra_row = {"kurs": ["Skikurs", "5 Vormittage à 4 Stunden, Abschlussrennen"],
                 "bw": ["Programm", "Welcome-Abend, Contest, Abschlussparty"],
                 "sil": ["Silvester", "Silvester-Menü und Sekt um Mitternacht"],
                 "camp": ["Betreuung", "Teamer rund um die Uhr, Coaching in Gruppen"],
                 "firm": ["Rahmenprogramm", "Teamrennen mit Zeitnahme, Hüttenabend"],
                 "fam": ["Kinder", "Ermäßigung für Kinder bis 11,9 Jahre im Zimmer der Eltern"],
                 "uni": ["Programm", "Welcome-Party, Pubquiz, Schlittenabend"]}.get(p["concept"])
    if extra_row:
        rows.append(extra_row)
    parts.append(table(["Leistung", "Details"], rows))
    parts.append(h("h2", "Zustiegsorte"))
    start = {"we": 19 * 60 + 30, "so": 17 * 60}.get(p["concept"], 16 * 60 + 30)
    route = route_for(p)
    parts.append(table(["Ort", "Treffpunkt", "Abfahrt"],
                       [[esc(c), esc(STOPS[c]), clock(start + off)] for c, off in route]))
    parts.append(h("p", V("Die Abfahrtszeiten sind Richtwerte; verbindlich sind die Zeiten in "
                          "[[deinen||Ihren]] Reiseunterlagen. Bitte 15 Minuten vor Abfahrt am Treffpunkt sein.", s)))
    parts.append(h("h2", "Nicht im Preis enthalten"))
    excl = ["Kurtaxe (vor Ort zu zahlen)", "Kaution für die Unterkunft", "Leihmaterial und Skikurse"
            if p["concept"] != "kurs" else "Leihmaterial", "Reiserücktrittsversicherung"]
    if p["noskipass"]:
        excl.insert(0, "Skipass")
    if any(H[c]["type"] in (1, 3) for c in p["hotels"]):
        excl.append("Endreinigung der Apartments")
    parts.append(ul(excl))
    parts.append(h("h2", "Gut zu wissen"))
    gtk = r.sample(GOOD_TO_KNOW, 2) + [GOOD_TO_KNOW_COUNTRY[p["country"]]]
    parts.append(h("p", " ".join(V(g, s) for g in gtk)))
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# Page bodies: hotels and destinations
# --------------------------------------------------------------------------------------------

def hotel_page(hh: dict, site: str) -> str:
    r = rng_for("hotel-page", hh["code"])
    t = T[hh["city"]]
    f = hh["facts"]
    typ = HOTEL_TYPES[hh["type"]]
    parts = [h("h1", esc(hh["title"]))]
    label = "" if typ in hh["title"] or typ[:5] in hh["title"] else f" ({typ})"
    parts.append(f'<p class="lead">{esc(Art(hh))} {esc(hh["title"])}{label} in {esc(t["title"])}, '
                 f'{esc(C[t["country"]]["title"])}: {f["beds"]} Betten, {num(f["distanceLiftM"])} m zum Lift.</p>')
    parts.append(h("h2", "Lage"))
    lage_fact, other_fact = r.sample(t["facts"], 2)
    lage = r.choice([
        f"{Art(hh)} {hh['title']} {verb(hh, 'liegt', 'liegen')} auf {num(f['altitudeM'])} Metern "
        f"{'direkt an der Piste' if f['distanceLiftM'] <= 50 else 'in ' + t['title']}. {lage_fact}",
        f"Bis zum nächsten Lift sind es {num(f['distanceLiftM'])} Meter, ins Ortszentrum {num(f['distanceCentreM'])} "
        f"Meter. {lage_fact}",
    ])
    parts.append(h("p", lage))
    parts.append(h("h2", "Ausstattung"))
    eq = []
    if f["sauna"]:
        eq.append("Sauna")
    if f["pool"]:
        eq.append("Hallenbad")
    eq.append("kostenloses WLAN" if f["wifi"] else "WLAN nur im Aufenthaltsraum")
    eq += r.sample(["Skikeller mit Schuhtrocknern", "Aufenthaltsraum", "Waschmaschine und Trockner (gegen Gebühr)",
                    "Tischtennis und Kicker", "Sonnenterrasse", "Parkplatz am Haus", "Aufzug",
                    "Gepäckraum für den An- und Abreisetag", "Brötchenservice"], 4)
    parts.append(ul(eq))
    parts.append(h("h2", "Zimmer und Verpflegung"))
    tt = TYPE_TEXT[hh["type"]]
    if hh["type"] in (1, 3):
        food = V("Verpflegt [[wirst du||werden Sie]] nicht; ein Supermarkt ist in wenigen Minuten erreichbar. "
                 "Bei einigen Reisen ist „4x Abendessen“ im Partnerrestaurant inklusive.", site)
    elif hh["type"] == 2:
        food = "Im Sportclub gibt es Halbpension (HP) mit Frühstücksbuffet und Abendessen in Buffetform."
    else:
        food = ("Frühstück ist immer inklusive; Halbpension (HP) ist je nach Reise enthalten oder buchbar. "
                "Vollpension (VP) bieten wir hier nicht an.")
    parts.append(paras([" ".join(tt if hh["type"] in (1, 3) else tt[:2]), food]))
    parts.append(h("h2", "Entfernungen"))
    parts.append(table(["Ziel", "Entfernung"], [
        ["Nächster Lift", f"{num(f['distanceLiftM'])} m"],
        ["Ortszentrum", f"{num(f['distanceCentreM'])} m"],
        ["Skischule", f"{num(max(50, f['distanceLiftM'] + r.choice([-30, 0, 50, 100])))} m"],
        ["Supermarkt", f"{num(r.choice([100, 200, 350, 500, 800]))} m"],
        ["Bushaltestelle (Skibus)", f"{num(r.choice([20, 50, 100, 250]))} m"],
    ]))
    trips = [p for p in hh["users"] if p["page"] not in ("nourl", "none")]
    if trips:
        parts.append(h("h2", "Reisen mit dieser Unterkunft"))
        parts.append(ul([f'<a href="{p["url"]}">{esc(p["title"])}</a>' for p in trips]))
    parts.append(h("h2", "Hinweise"))
    hints = [V(r.choice([
        "Check-in ab 17 Uhr, Check-out bis 10 Uhr. Am Anreisetag [[kannst du||können Sie]] das Gepäck im Skiraum abstellen.",
        "Die Zimmer sind am Anreisetag ab 16 Uhr bezugsfertig und müssen am Abreisetag bis 9:30 Uhr geräumt sein.",
    ]), site)]
    if hh["type"] in (1, 3):
        hints.append("Bei Ankunft wird eine Kaution von 150 € pro Wohnung fällig; die Endreinigung ist nicht im Preis "
                     "enthalten. Handtücher und Geschirrtücher bitte selbst mitbringen.")
    else:
        hints.append("Die Kaution von 50 € pro Person wird bei Ankunft in bar hinterlegt und bei Abreise erstattet. "
                     "Haustiere sind nicht erlaubt.")
    parts.append(paras(hints))
    parts.append(h("h2", f"Über {esc(t['title'])}"))
    fact = other_fact
    parts.append(h("p", r.choice([
        f"{fact} Das Skigebiet {t['area']} hat rund {num(t['km'])} Pistenkilometer; die Lifte reichen bis auf "
        f"{num(t['top'])} Meter.",
        f"{t['title']} liegt auf {num(t['alt'])} Metern in der Region {R[t['region']]['title']}. {fact}",
        f"{fact} Von {t['title']} aus sind {num(t['km'])} Kilometer Piste im Gebiet {t['area']} erreichbar.",
    ])))
    parts.append(h("h2", "Das sagen unsere Gäste"))
    quotes = r.sample([q for q, cond in GUEST_QUOTES if quote_fits(cond, hh)], 2)
    people = r.sample(GUESTS, 2)
    parts.append("".join(f"<blockquote><p>„{q}“</p><footer>{esc(n)}</footer></blockquote>"
                         for q, n in zip(quotes, people)))
    return "\n".join(parts)


# (quote, what the house must be like for it to fit)
GUEST_QUOTES = [
    ("Die Lage ist unschlagbar: Ski anschnallen und los.", "near"),
    ("Sauber, gemütlich und ein Frühstück, bei dem man lange sitzen bleibt.", "rooms"),
    ("Die Zimmer sind einfach, aber nach sieben Stunden auf der Piste braucht man auch nicht mehr.", "rooms"),
    ("Der Skikeller mit Schuhtrockner ist Gold wert – morgens warme Skischuhe!", "any"),
    ("Wir waren zu sechst im Apartment, mit etwas Ordnung hat das super funktioniert.", "apt"),
    ("Die Gastgeber haben uns sogar Tipps für die beste Hütte gegeben.", "host"),
    ("Abends in der Sauna, danach an die Bar – besser kann ein Skitag nicht enden.", "sauna"),
    ("Das WLAN war etwas schwach, aber wer will im Skiurlaub schon am Handy hängen?", "nowifi"),
    ("Halbpension war reichlich, das Abendessen hatte jeden Tag drei Gänge.", "rooms"),
    ("Bis zum Lift sind es ein paar Minuten zu Fuß, dafür ist es nachts schön ruhig.", "far"),
    ("Die Küche im Apartment ist klein, aber für Nudeln und Frühstück reicht es völlig.", "apt"),
    ("Wir kommen jedes Jahr wieder, inzwischen fühlt es sich wie ein zweites Zuhause an.", "any"),
    ("Check-in hat am Anreisetag etwas gedauert, aber das Gepäck konnten wir vorher abstellen.", "any"),
    ("Perfekt für Gruppen: Im Aufenthaltsraum hatten wir jeden Abend Platz für alle.", "club"),
]


def quote_fits(cond: str, hh: dict) -> bool:
    f, typ = hh["facts"], hh["type"]
    return {"any": True, "near": f["distanceLiftM"] <= 100, "far": f["distanceLiftM"] >= 300,
            "rooms": typ in (2, 4, 5), "apt": typ in (1, 3), "host": typ in (4, 5), "sauna": f["sauna"],
            "nowifi": not f["wifi"], "club": typ == 2}[cond]
GUESTS = ["Jana, 26, aus Köln", "Familie Weber aus Ulm", "Tobias, 31, aus Stuttgart", "Lea und Max aus Mannheim",
          "Karin, 54, aus Frankfurt", "Daniel, 22, aus München", "Familie Öztürk aus Dortmund",
          "Sophie, 19, aus Freiburg", "Markus, 45, aus Würzburg", "Nele, 24, aus Bonn",
          "Andreas und Petra aus Nürnberg", "Luca, 27, aus Zürich"]


def products_of(pred) -> list[dict]:
    return [p for p in P if pred(p) and p["page"] not in ("nourl", "none") and p["searchable"]]


def city_page(t: dict, site: str) -> str:
    r = rng_for("city-page", t["key"])
    parts = [h("h1", f"Skiurlaub in {esc(t['title'])}")]
    parts.append(city_description(t))
    parts.append(h("h2", "Das Skigebiet in Zahlen"))
    parts.append(table(["", ""], [
        ["Skigebiet", esc(t["area"])], ["Höhe des Ortes", f"{num(t['alt'])} m"],
        ["Höchste Bergstation", f"{num(t['top'])} m"], ["Pistenkilometer", f"ca. {num(t['km'])} km"],
        ["Region", esc(R[t["region"]]["title"])], ["Land", esc(C[t["country"]]["title"])]]))
    trips = products_of(lambda p: t["key"] in p["hotel_cities"])
    parts.append(h("h2", f"Unsere Reisen nach {esc(t['title'])}"))
    parts.append(ul([f'<a href="{p["url"]}">{esc(p["title"])}</a> – {esc(p["teaser"])}' for p in trips]))
    hs = [x for x in H.values() if x["city"] == t["key"] and x["site"]]
    if hs:
        parts.append(h("h2", "Unterkünfte"))
        parts.append(ul([f"{esc(x['title'])} ({HOTEL_TYPES[x['type']]}, {num(x['facts']['distanceLiftM'])} m zum Lift)"
                         for x in hs]))
    parts.append(h("h2", "Anreise"))
    stops = [s for s, _ in ROUTES["fel" if t["key"] == "fel" else t["country"]]]
    parts.append(h("p", V(f"Unsere Busse fahren ab {join_de(stops)} nach {t['title']}. "
                          "Die Fahrt dauert je nach Zustieg zwischen sechs und zwölf Stunden; gefahren wird über Nacht, "
                          "damit [[du||Sie]] am Ankunftstag schon auf die Piste [[kannst||können]].", site)))
    parts.append(h("h2", "Unser Tipp"))
    parts.append(h("p", V(r.choice([
        f"Wer in {t['title']} früh am Lift ist, hat die Pisten bis zehn Uhr fast für sich. Mittags wird es an den "
        "Hütten voll – [[iss||essen Sie]] lieber um 11:30 oder nach 13:30 Uhr.",
        f"Die Reiseleitung kennt in {t['title']} die besten Hütten und die Pisten, die nachmittags noch Sonne haben. "
        "[[Frag einfach||Fragen Sie einfach]] beim Abendessen nach.",
    ]), site)))
    return "\n".join(parts)


def region_page(reg: dict, site: str) -> str:
    parts = [h("h1", esc(reg["title"]))]
    parts.append(paras([reg["desc"]]))
    for t in T.values():
        if t["region"] != reg["key"]:
            continue
        parts.append(h("h2", esc(t["title"])))
        parts.append(paras([f"{t['facts'][0]} {t['facts'][1]}",
                            f"Höhe: {num(t['alt'])} m, Lifte bis {num(t['top'])} m, {num(t['km'])} Pistenkilometer im Gebiet "
                            f"{esc(t['area'])}."]))
    trips = products_of(lambda p: any(T[c]["region"] == reg["key"] for c in p["hotel_cities"]))
    parts.append(h("h2", f"Reisen in die Region {esc(reg['title'])}"))
    parts.append(ul([f'<a href="{p["url"]}">{esc(p["title"])}</a> – {esc(p["teaser"])}' for p in trips]))
    hs = [x for x in H.values() if T[x["city"]]["region"] == reg["key"] and x["site"]]
    parts.append(h("h2", "Unterkünfte in der Region"))
    parts.append(ul([f"{esc(x['title'])}, {esc(T[x['city']]['title'])} ({HOTEL_TYPES[x['type']]})" for x in hs]))
    stops = [s_ for s_, _ in ROUTES[reg["country"]]]
    parts.append(h("h2", "Anreise"))
    parts.append(h("p", f"Die Busse in die Region {reg['title']} fahren über Nacht ab {join_de(stops)}. "
                        "Wer mit dem eigenen Auto kommt, sollte Winterreifen und Schneeketten dabeihaben; auf den "
                        "Passstraßen herrscht bei Schneefall Kettenpflicht. Parkplätze in den Orten sind knapp und "
                        "nicht im Preis enthalten."))
    return "\n".join(parts)


def country_page(c: dict, site: str) -> str:
    parts = [h("h1", f"Skireisen nach {esc(c['title'])}")]
    parts.append(paras(COUNTRY_DESC[c["key"]]))
    parts.append(h("h2", "Regionen"))
    for reg in R.values():
        if reg["country"] == c["key"]:
            parts.append(h("h3", esc(reg["title"])))
            if reg["desc"]:
                parts.append(h("p", reg["desc"]))
    parts.append(h("h2", f"Unsere Skiorte in {esc(c['title'])}"))
    rows = [[esc(t["title"]), esc(R[t["region"]]["title"]), f"{num(t['alt'])} m", f"{num(t['km'])} km"]
            for t in T.values() if t["country"] == c["key"]]
    parts.append(table(["Ort", "Region", "Höhe", "Pisten"], rows))
    stops = [s for s, _ in ROUTES[c["key"]]]
    parts.append(h("h2", "Anreise"))
    parts.append(h("p", f"Die Busse nach {c['title']} fahren ab {join_de(stops)}. Auf dem Weg gibt es alle vier bis "
                        "fünf Stunden eine Pause; die Fahrer wechseln sich ab."))
    return "\n".join(parts)


def concept_page(k: dict, site: str) -> str:
    parts = [h("h1", esc(k["title"]))]
    parts.append(paras(CONCEPT_DESC[k["key"]]))
    parts.append(h("h2", "So läuft die Woche"))
    parts.append(paras([
        "Los geht es am Abend mit dem Bus; am nächsten Morgen bist du im Skigebiet und hast direkt den ersten Skitag. "
        "Die Reiseleitung verteilt die Skipässe und zeigt dir am ersten Tag das Gebiet.",
        V(WEEK_PROGRAM[k["key"]], site) + " Wer mag, kann jeden Tag mitmachen – oder einfach mal ausschlafen.",
    ]))
    trips = products_of(lambda p: p["concept"] == k["key"])
    parts.append(h("h2", "Alle Ziele"))
    parts.append(ul([f'<a href="{p["url"]}">{esc(p["title"])}</a> – {esc(p["teaser"])}' for p in trips]))
    parts.append(h("h2", "Für wen?"))
    parts.append(h("p", "Für alle ab 18 Jahren, die Spaß am Schnee haben, egal ob auf Ski oder Snowboard."
                   if k["key"] == "bw" else
                   "Für Jugendliche von 14 bis 17 Jahren. Die Eltern bekommen vor der Reise einen Infobrief mit "
                   "Packliste, Notfallnummer und den Regeln im Camp."))
    parts.append(h("h2", "Leistungen"))
    parts.append(ul(["Busanreise über Nacht mit Zustieg in vielen Städten", "sieben Nächte nah am Lift",
                     "6-Tage-Skipass", "Halbpension (HP) oder Vollpension (VP), je nach Reise"
                     if k["key"] == "bw" else "Vollpension (VP) mit Lunchpaket",
                     "Programm an jedem Abend" if k["key"] == "bw" else "Betreuung durch Teamer rund um die Uhr"]))
    parts.append(h("h2", "Sicherheit"))
    parts.append(h("p", "Auf der Piste gilt Helmpflicht, im Snowpark zusätzlich Rückenprotektor. Die Teamer haben "
                        "eine Ausbildung als Ski- oder Snowboardlehrer und einen aktuellen Erste-Hilfe-Kurs. Nachtruhe "
                        "ist um 22:30 Uhr, Alkohol und Rauchen sind im Camp nicht erlaubt."
                   if k["key"] == "camp" else
                   "Die Reiseleitung ist jeden Tag in der Unterkunft erreichbar und hat eine Notfallnummer für die "
                   "Nacht. Helm tragen wir alle – und du bitte auch. Leihhelme gibt es bei unseren Partnerverleihen."))
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# Page bodies: service and info pages
# --------------------------------------------------------------------------------------------

def page_anreise(site: str) -> str:
    r = rng_for("anreise", site)
    sv = lambda t: V(t, site)  # noqa: E731
    parts = [h("h1", "Anreise mit dem Bus")]
    parts.append(h("p", sv(r.choice([
        "Alle unsere Reisen beginnen mit einer Busfahrt ab Deutschland. Wir fahren mit modernen Fernreisebussen "
        "unserer Partnerunternehmen; die Fahrer kennen die Strecken in die Alpen seit vielen Jahren.",
        "Mit dem Bus in den Schnee: kein Stau im Skiort, keine Parkplatzsuche, keine Schneeketten. "
        "[[Du steigst||Sie steigen]] abends ein und [[wachst||wachen]] im Skigebiet auf.",
    ]))))
    parts.append(h("h2", "Der Bus"))
    parts.append(ul(["Schlafsessel mit verstellbarer Rückenlehne und Fußstütze",
                     "Bordtoilette, Klimaanlage und USB-Steckdosen an jedem Platz",
                     "Kaffee, Tee und kalte Getränke zu kleinen Preisen",
                     "Zwei Fahrer auf allen Nachtfahrten, damit die Ruhezeiten eingehalten werden"]))
    parts.append(h("h2", "Gepäck"))
    parts.append(h("p", sv(
        "Pro Person sind ein Koffer oder eine Reisetasche bis 20 kg, ein kleines Handgepäck und ein Paar Ski oder ein "
        "Snowboard erlaubt. Ski und Boards bitte in einer Tasche verpacken und mit Namen versehen. Skischuhe gehören "
        "in eine eigene Tasche, Helm und Skikleidung am besten ins Handgepäck – am Ankunftstag [[ziehst du dich||ziehen "
        "Sie sich]] um, bevor die Zimmer bezugsfertig sind.")))
    parts.append(h("h2", "Pausen und Fahrzeiten"))
    parts.append(h("p",
        "Nach EU-Recht legen die Fahrer spätestens nach viereinhalb Stunden eine Pause von 45 Minuten ein. Nach "
        "Österreich sind die Busse je nach Zustieg sieben bis zehn Stunden unterwegs, nach Frankreich zehn bis "
        "dreizehn Stunden. Nachts wird das Licht gedimmt; Filme laufen nur am Tag."))
    parts.append(h("h2", "Grenzen und Ausweis"))
    parts.append(h("p", sv(
        "Auch innerhalb des Schengenraums wird an den Grenzen kontrolliert. [[Nimm||Nehmen Sie]] unbedingt "
        "[[deinen||Ihren]] Personalausweis oder Reisepass mit; bei Fahrten in die Schweiz gelten die Zollregeln "
        "für Bargeld und Lebensmittel.")))
    parts.append(h("h2", "Eigene Anreise"))
    parts.append(h("p", sv(
        "Wer lieber mit dem Auto oder der Bahn anreist, kann bei vielen Reisen die Option „Eigenanreise“ wählen. Der "
        "Reisepreis reduziert sich um den Busanteil; Parkgebühren im Skiort sind nicht im Preis enthalten. "
        "[[Melde dich||Melden Sie sich]] am Ankunftstag bei der Reiseleitung in der Unterkunft.")))
    return "\n".join(parts)


ALL_STOPS = ["Dortmund", "Düsseldorf", "Köln", "Bonn", "Frankfurt am Main", "Würzburg", "Nürnberg", "Mannheim",
             "Karlsruhe", "Stuttgart", "Ulm", "München", "Freiburg im Breisgau", "Basel", "Singen", "Zürich"]


def page_zustiege(site: str) -> str:
    sv = lambda t: V(t, site)  # noqa: E731
    parts = [h("h1", "Zustiegsorte")]
    parts.append(h("p", sv(
        "Unsere Busse halten an mehr als fünfzehn Orten in Deutschland und der Schweiz – von Köln und Düsseldorf über "
        "Frankfurt und Stuttgart bis München und Zürich. Welche Zustiege eine Reise hat, hängt vom Ziel ab: "
        "Nach Frankreich fahren wir über Karlsruhe, Freiburg und Basel, nach Österreich und Italien über Stuttgart, "
        "Ulm und München, in die Schweiz über Singen und Zürich.")))
    stops = ALL_STOPS if site != "ski-wochenenden" else ["Köln", "Düsseldorf", "Frankfurt am Main", "Mannheim",
                                                         "Karlsruhe", "Stuttgart", "Ulm", "München",
                                                         "Freiburg im Breisgau", "Zürich"]

    def goes(c: str) -> str:
        dest = [n for key, n in (("fr", "Frankreich"), ("at", "Österreich"), ("it", "Italien"),
                                 ("ch", "Schweiz"), ("de", "Deutschland")) if any(s == c for s, _ in ROUTES[key])]
        return ", ".join(dest) or "Schwarzwald"

    if site == "ser":
        surcharge = {"Dortmund": "25 €", "Düsseldorf": "19 €", "Köln": "19 €", "Bonn": "19 €", "Zürich": "29 €",
                     "Basel": "15 €", "Singen": "0 €"}
        rows = [[esc(c), esc(STOPS[c]), goes(c), surcharge.get(c, "0 €")] for c in stops]
        parts.append(table(["Ort", "Treffpunkt", "Reiseziele", "Zuschlag pro Strecke"], rows))
        parts.append(h("p", "Die Zuschläge gelten pro Person und Strecke und sind nicht im Reisepreis enthalten. "
                            "Maßgeblich sind die Preise in der Buchung; die Tabelle gibt den Stand von Juli 2026 wieder."))
    else:
        rows = [[esc(c), esc(STOPS[c]), goes(c)] for c in stops]
        parts.append(table(["Ort", "Treffpunkt", "Reiseziele"], rows))
    parts.append(h("h2", "Parken am Zustiegsort"))
    parts.append(h("p", sv(
        "In München [[parkst du||parken Sie]] am P+R Fröttmaning direkt an der U6, in Stuttgart im Parkhaus P20 am "
        "Flughafen (gegen Gebühr). In Köln und Zürich gibt es am Treffpunkt keine Parkplätze; hier "
        "[[kommst du||kommen Sie]] am besten mit Bahn oder Tram.")))
    parts.append(h("h2", "Pünktlichkeit"))
    parts.append(h("p", sv(
        "[[Sei||Seien Sie]] bitte 15 Minuten vor der Abfahrt am Treffpunkt. Der Bus kann wegen der Lenkzeiten nicht "
        "warten. Wenn [[du dich||Sie sich]] verspätest, [[ruf||rufen Sie]] die Notfallnummer aus den Reiseunterlagen an – "
        "manchmal ist ein späterer Zustieg auf der Strecke möglich.")))
    parts.append(h("h2", "Zubringer aus der Schweiz"))
    parts.append(h("p",
        "Für Gäste aus der Schweiz halten ausgewählte Busse in Zürich (Carparkplatz Sihlquai, fünf Gehminuten vom "
        "Hauptbahnhof) und in Basel am Badischen Bahnhof. Der Zustieg in Zürich ist nur für Reisen in die Schweiz, "
        "nach Österreich über den Arlberg und nach Italien möglich."))
    return "\n".join(parts)


def page_versicherung(site: str) -> str:
    r = rng_for("versicherung", site)
    sv = lambda t: V(t, site)  # noqa: E731
    parts = [h("h1", "Reiseversicherung")]
    intro = r.choice([
        "Eine Skireise wird oft Monate im Voraus gebucht – und bis zur Abfahrt kann viel passieren. Deshalb empfehlen "
        "wir dringend eine Reiserücktrittsversicherung. Sie ist nicht im Reisepreis enthalten und kann bei der Buchung "
        "oder bis 30 Tage vor Reisebeginn abgeschlossen werden.",
        "Krank vor der Abreise, Knie verdreht am zweiten Skitag, Gepäck verschwunden: Für solche Fälle gibt es die "
        "Reiseversicherung. Sie ist nicht im Preis enthalten, lässt sich aber bequem mit der Reise buchen.",
    ])
    parts.append(h("p", intro))
    secs = [
        ("Reiserücktrittsversicherung", sv(
            "Sie übernimmt die Stornokosten, wenn [[du||Sie]] die Reise aus einem versicherten Grund nicht antreten "
            "[[kannst||können]] – etwa wegen Krankheit, Unfall oder Jobverlust. Ohne Versicherung fallen je nach "
            "Zeitpunkt bis zu 90 Prozent des Reisepreises an.")),
        ("Reiseabbruchversicherung", sv(
            "Muss die Reise vorzeitig beendet werden, erstattet sie die nicht genutzten Leistungen und die Mehrkosten "
            "der Rückreise. Gerade beim Skifahren ist das kein theoretischer Fall.")),
        ("Auslandskrankenversicherung", sv(
            "Die gesetzliche Krankenkasse zahlt im Ausland nur die Leistungen, die dort für Einheimische gelten. Ein "
            "Rettungshubschrauber von der Piste oder der Rücktransport nach Deutschland sind nicht gedeckt. Für "
            "Reisen in die Schweiz und nach Österreich [[solltest du||sollten Sie]] deshalb unbedingt eine private "
            "Auslandskrankenversicherung haben.")),
        ("Gepäck- und Skiversicherung", sv(
            "Sie ersetzt gestohlene oder beschädigte Ski und Snowboards. Viele Hausratversicherungen decken das "
            "bereits ab – ein Blick in die eigenen Unterlagen lohnt sich.")),
    ]
    r.shuffle(secs)
    for t_, p_ in secs[:3]:
        parts.append(h("h2", t_))
        parts.append(h("p", p_))
    parts.append(h("h2", "Versicherungspakete"))
    parts.append(table(["Paket", "Enthalten", "Preis ab"], [
        ["Basis", "Reiserücktritt", "19 €"],
        ["Komfort", "Reiserücktritt und Reiseabbruch", "29 €"],
        ["Rundum", "Rücktritt, Abbruch, Auslandskranken- und Gepäckversicherung", "45 €"],
    ]))
    parts.append(h("p", "Die Preise gelten pro Person und Reise bis 800 € Reisepreis. Es gelten die "
                        "Versicherungsbedingungen unseres Partners, die wir mit der Buchungsbestätigung senden."))
    parts.append(h("h2", "Im Schadensfall"))
    parts.append(h("p", V("[[Musst du||Müssen Sie]] stornieren, [[melde dich||melden Sie sich]] sofort bei uns – je früher, "
                          "desto geringer die Stornokosten. Ein ärztliches Attest [[brauchst du||brauchen Sie]] für die "
                          "Versicherung in jedem Fall.", site)))
    return "\n".join(parts)


def page_agb(site: str) -> str:
    info = SITE_INFO[site]
    r = rng_for("agb", site)
    parts = [h("h1", "Allgemeine Geschäftsbedingungen")]
    parts.append(h("p", f"Die folgenden Bedingungen gelten für alle Pauschalreisen der {esc(info['company'])}, "
                        f"{esc(info['street'])}, {esc(info['town'])}. Sie ergänzen die §§ 651a–y BGB."))
    secs = [
        ("1. Abschluss des Reisevertrags",
         r.choice(["Mit der Buchung bieten Sie uns den Abschluss eines Reisevertrags verbindlich an. Der Vertrag kommt "
                   "mit unserer Buchungsbestätigung zustande, die wir per E-Mail senden.",
                   "Der Reisevertrag kommt zustande, sobald wir Ihre Buchung schriftlich oder per E-Mail bestätigen. "
                   "Wer für andere mitbucht, steht für deren Verpflichtungen wie für die eigenen ein."])),
        ("2. Bezahlung",
         r.choice(["Nach Erhalt der Bestätigung und des Sicherungsscheins ist eine Anzahlung von 20 % des "
                   "Reisepreises fällig. Der Rest ist 30 Tage vor Reisebeginn zu zahlen.",
                   "Die Anzahlung beträgt 20 % des Reisepreises und ist mit der Bestätigung fällig, der Restbetrag "
                   "vier Wochen vor der Abreise. Bei Buchungen kurz vor Reisebeginn ist der gesamte Betrag sofort fällig."])),
        ("3. Leistungen und Preisänderungen",
         "Welche Leistungen vertraglich vereinbart sind, ergibt sich aus der Reiseausschreibung und der Bestätigung. "
         "Angaben in Prospekten, auf Websites oder in Blogartikeln, die davon abweichen, sind nicht Vertragsinhalt. "
         "Preiserhöhungen nach Vertragsschluss sind nur bei gestiegenen Treibstoffkosten oder Abgaben zulässig und "
         "müssen spätestens 20 Tage vor Reisebeginn mitgeteilt werden."),
        ("4. Rücktritt durch den Reisenden",
         "Sie können jederzeit vor Reisebeginn vom Vertrag zurücktreten. Wir verlangen dann eine pauschale "
         "Entschädigung, die sich nach dem Zeitpunkt des Rücktritts richtet:"),
        ("5. Rücktritt durch den Veranstalter",
         r.choice(["Wird die Mindestteilnehmerzahl von 25 Personen nicht erreicht, können wir bis 21 Tage vor "
                   "Reisebeginn zurücktreten. Den gezahlten Reisepreis erhalten Sie vollständig zurück.",
                   "Bei Reisen mit Mindestteilnehmerzahl dürfen wir bis drei Wochen vor Abreise zurücktreten, wenn "
                   "diese nicht erreicht wird; bereits geleistete Zahlungen erstatten wir unverzüglich."])),
        ("6. Haftung",
         "Für Schäden, die keine Körperschäden sind und nicht schuldhaft herbeigeführt wurden, ist die Haftung auf "
         "den dreifachen Reisepreis beschränkt. Für Unfälle beim Skifahren haften wir nicht; Skikurse und "
         "Leihmaterial vor Ort sind Fremdleistungen."),
        ("7. Pass-, Visa- und Gesundheitsvorschriften",
         "Für Staatsangehörige eines EU-Staates und der Schweiz genügt ein gültiger Personalausweis. Gäste anderer "
         "Staaten informieren sich bitte selbst bei den zuständigen Konsulaten."),
    ]
    for t_, p_ in secs:
        parts.append(h("h2", t_))
        parts.append(h("p", p_))
        if t_.startswith("4."):
            steps = r.choice([[("bis 30 Tage vor Reisebeginn", "20 %"), ("29 bis 22 Tage", "30 %"),
                               ("21 bis 15 Tage", "40 %"), ("14 bis 7 Tage", "60 %"), ("ab 6 Tage", "80 %"),
                               ("Nichtantritt", "90 %")],
                              [("bis 45 Tage vor Reisebeginn", "15 %"), ("44 bis 30 Tage", "25 %"),
                               ("29 bis 15 Tage", "45 %"), ("14 bis 3 Tage", "70 %"), ("ab 2 Tage und Nichtantritt", "90 %")]])
            parts.append(table(["Zeitpunkt des Rücktritts", "Entschädigung"], [list(s) for s in steps]))
    parts.append(h("p", f"Stand: {r.choice(['Juni', 'Juli', 'September'])} 2026"))
    return "\n".join(parts)


def page_impressum(site: str) -> str:
    info = SITE_INFO[site]
    parts = [h("h1", "Impressum")]
    parts.append(h("p", f"<strong>{esc(info['company'])}</strong><br>{esc(info['street'])}<br>{esc(info['town'])}"))
    parts.append(h("p", f"Telefon: {info['phone']}<br>E-Mail: {info['mail']}"))
    parts.append(h("p", f"Geschäftsführung: {esc(info['ceo'])}<br>Registergericht: {esc(info['register'])}<br>"
                        f"Umsatzsteuer-Identifikationsnummer gemäß § 27a UStG: {info['vat']}"))
    if site == "ski-wochenenden":
        parts.append(h("p", "Ski-Wochenenden ist eine Marke der SER Skireisen GmbH. Veranstalter aller Reisen auf "
                            "dieser Website ist die SER Skireisen GmbH."))
    parts.append(h("h2", "Verantwortlich für den Inhalt"))
    parts.append(h("p", f"{esc(info['ceo'].split(',')[0])}, Anschrift wie oben"))
    parts.append(h("h2", "Streitschlichtung"))
    parts.append(h("p", "Die Europäische Kommission stellt eine Plattform zur Online-Streitbeilegung bereit. Wir sind "
                        "nicht bereit und nicht verpflichtet, an Streitbeilegungsverfahren vor einer "
                        "Verbraucherschlichtungsstelle teilzunehmen."))
    r = rng_for("impressum", site)
    parts.append(h("h2", "Haftung für Inhalte"))
    parts.append(h("p", r.choice([
        "Die Inhalte unserer Seiten wurden mit größter Sorgfalt erstellt. Für die Richtigkeit, Vollständigkeit und "
        "Aktualität der Inhalte können wir jedoch keine Gewähr übernehmen. Insbesondere Preise und Leistungen in "
        "redaktionellen Texten und Blogartikeln können von der aktuellen Ausschreibung abweichen; verbindlich sind "
        "allein die Angaben in der Buchung.",
        "Wir bemühen uns, alle Angaben aktuell zu halten. Reisetexte, Blogbeiträge und Unterkunftsbeschreibungen "
        "werden jedoch nicht bei jeder Preis- oder Leistungsänderung angepasst. Maßgeblich sind die Reiseausschreibung "
        "und die Buchungsbestätigung.",
    ])))
    parts.append(h("h2", "Haftung für Links"))
    parts.append(h("p", "Unser Angebot enthält Links zu externen Websites Dritter, etwa zu Skigebieten, Wetterdiensten "
                        "und Lawinenwarndiensten, auf deren Inhalte wir keinen Einfluss haben. Für diese fremden "
                        "Inhalte ist stets der jeweilige Anbieter verantwortlich. Bei Bekanntwerden von "
                        "Rechtsverletzungen entfernen wir derartige Links umgehend."))
    parts.append(h("h2", "Urheberrecht"))
    parts.append(h("p", "Texte, Fotos und Grafiken auf dieser Website unterliegen dem deutschen Urheberrecht. "
                        "Vervielfältigung, Bearbeitung und jede Art der Verwertung außerhalb der Grenzen des "
                        "Urheberrechts bedürfen der schriftlichen Zustimmung des jeweiligen Autors."))
    parts.append(h("h2", "Bildnachweise"))
    parts.append(h("p", "Fotos: eigene Aufnahmen, Tourismusverbände der Skiorte, Unterkünfte. Die Rechte liegen bei "
                        "den jeweiligen Urhebern."))
    return "\n".join(parts)


GENERAL_FAQ = [
    ("Wie buche ich eine Reise?",
     "Am einfachsten online über die Buchungsstrecke der jeweiligen Reise. [[Du kannst||Sie können]] auch telefonisch "
     "oder per E-Mail buchen; die Bestätigung kommt innerhalb von zwei Werktagen."),
    ("Wann bekomme ich meine Reiseunterlagen?",
     "Etwa zehn Tage vor der Abfahrt per E-Mail, mit Abfahrtszeit, Zustieg, Unterkunft und Notfallnummer."),
    ("Kann ich allein mitfahren?",
     "Ja, sehr viele Gäste reisen allein. [[Du wohnst||Sie wohnen]] dann im Mehrbettzimmer oder Apartment mit anderen "
     "Gästen; ein Einzelzimmer (EZ) ist nur in wenigen Unterkünften und gegen Zuschlag möglich."),
    ("Was passiert, wenn nicht genug Schnee liegt?",
     "Unsere Ziele sind hoch gelegen oder haben einen Gletscher. Sollten trotzdem nur wenige Pisten offen sein, "
     "organisiert die Reiseleitung Ausflüge in Nachbargebiete; ein Anspruch auf Erstattung besteht nicht."),
    ("Ist der Skipass immer inklusive?",
     "Bei den meisten Reisen ja. Einige Reisen gibt es ausdrücklich „ohne Skipass“ – das steht dann im Titel und in "
     "den Leistungen."),
    ("Was bedeuten HP, VP, DZ und EZ?",
     "HP ist Halbpension (Frühstück und Abendessen), VP Vollpension, DZ Doppelzimmer und EZ Einzelzimmer. „4x "
     "Abendessen“ heißt, dass es an vier Abenden ein Abendessen gibt."),
    ("Kann ich meine Reise umbuchen?",
     "Bis 30 Tage vor der Abfahrt ist eine Umbuchung gegen eine Gebühr von 30 € pro Person möglich, danach gelten "
     "die Stornobedingungen."),
    ("Gibt es eine Altersgrenze?",
     "Das hängt von der Reise ab: Boarderweek und Uni-Skireisen ab 18, Snowzone Camps von 14 bis 17 Jahren, "
     "Familienwochen ohne Altersgrenze."),
    ("Wie viel Bargeld brauche ich vor Ort?",
     "Für Kurtaxe und Kaution (nicht im Preis enthalten) [[solltest du||sollten Sie]] etwa 150 bis 200 € in bar "
     "dabeihaben; in der Schweiz Franken."),
    ("Darf ich Alkohol im Bus trinken?",
     "Nein, im Bus ist Alkohol nicht erlaubt. Das gilt auch für mitgebrachte Getränke."),
]


def page_faq(site: str) -> str:
    r = rng_for("faq-page", site)
    qs = GENERAL_FAQ[:]
    r.shuffle(qs)
    n = r.randint(6, 9)
    parts = [h("h1", "Häufige Fragen")]
    parts.append(h("p", V("Hier [[findest du||finden Sie]] Antworten auf die Fragen, die uns am häufigsten gestellt "
                          "werden. Nicht dabei? [[Ruf uns an||Rufen Sie uns an]] oder [[schreib||schreiben Sie]] uns.", site)))
    for q, a in qs[:n]:
        parts.append(h("h2", q))
        parts.append(h("p", V(a, site)))
    return "\n".join(parts)


def page_skiverleih(site: str) -> str:
    sv = lambda t: V(t, site)  # noqa: E731
    parts = [h("h1", "Skiverleih")]
    parts.append(h("p", sv(
        "Eigene Ski zu transportieren lohnt sich nicht immer. In fast allen Zielorten arbeiten wir mit einem "
        "Verleih zusammen, der unseren Gästen Rabatt gibt. [[Reservierst du||Reservieren Sie]] das Material schon bei "
        "der Buchung, liegt es bei der Ankunft bereit – angepasst wird vor Ort.")))
    parts.append(h("h2", "Preise für sechs Tage"))
    parts.append(table(["Kategorie", "Ski oder Snowboard", "mit Schuhen"], [
        ["Bronze (Einsteiger)", "89 €", "119 €"], ["Silber (Fortgeschrittene)", "119 €", "149 €"],
        ["Gold (Premium, Freeride)", "159 €", "189 €"], ["Helm", "25 €", "–"], ["Kinder bis 12 Jahre", "59 €", "79 €"]]))
    parts.append(h("p", "Die Preise sind Richtwerte der Saison 2026/27 und nicht im Reisepreis enthalten. Bei "
                        "Wochenendreisen gelten die Tagespreise des Verleihs."))
    parts.append(h("h2", "Eigene Ausrüstung"))
    parts.append(h("p", sv(
        "Wer eigene Ski mitbringt, sollte sie vor der Saison wachsen und die Bindung prüfen lassen. Im Bus ist Platz für "
        "ein Paar Ski oder ein Snowboard pro Person, in einer Tasche. Skischuhe [[nimmst du||nehmen Sie]] am besten ins "
        "Handgepäck.")))
    parts.append(h("h2", "So funktioniert die Reservierung"))
    parts.append(h("p", V("[[Gib||Geben Sie]] bei der Buchung Körpergröße, Gewicht, Schuhgröße und Könnensstufe an. "
                          "Der Verleih stellt das Material danach zusammen; am ersten Tag wird es nur noch angepasst. "
                          "Bezahlt wird vor Ort, bar oder mit Karte.", site)))
    parts.append(h("h2", "Versicherung"))
    parts.append(h("p", "Gegen einen Aufpreis von 2 € pro Tag ist das Leihmaterial gegen Bruch und Diebstahl "
                        "versichert. Ohne diese Versicherung haften Sie für Schäden bis zum Zeitwert."))
    return "\n".join(parts)


def page_kurse(site: str) -> str:
    board = site == "ski-boarderweek"
    sv = lambda t: V(t, site)  # noqa: E731
    what = "Snowboardkurse" if board else "Skikurse"
    parts = [h("h1", what)]
    parts.append(h("p", sv(
        f"Ob [[du||Sie]] zum ersten Mal auf {'dem Brett' if board else 'Ski'} [[stehst||stehen]] oder an der Technik "
        "feilen [[willst||wollen]]: Unsere Partnerschulen in den Zielorten unterrichten in kleinen Gruppen auf Deutsch. "
        "Die Kurse sind nicht im Reisepreis enthalten, außer bei den Skikurs-Wochen.")))
    parts.append(h("h2", "Kursformate"))
    parts.append(ul([
        "Anfängerkurs: drei Vormittage à drei Stunden, maximal acht Personen",
        "Aufbaukurs: Kurvenfahren, steilere Pisten, erste Sprünge" if board else "Aufbaukurs: paralleles Fahren, rote Pisten",
        "Technik-Training für Fortgeschrittene mit Videoanalyse",
        "Privatstunden auf Anfrage",
    ]))
    parts.append(h("h2", "Preise"))
    parts.append(table(["Kurs", "Dauer", "Preis"], [
        ["Anfängerkurs", "3 × 3 Stunden", "119 €"], ["Aufbaukurs", "3 × 3 Stunden", "129 €"],
        ["Technik-Training", "2 × 2 Stunden", "89 €"], ["Privatstunde", "1 Stunde", "ab 70 €"]]))
    parts.append(h("p", sv("Die Kurse [[kannst du||können Sie]] bei der Buchung oder bis 14 Tage vor der Abfahrt "
                           "dazubuchen. Leihmaterial ist nicht inklusive.")))
    parts.append(h("h2", "Kinder"))
    parts.append(h("p", "Kinderskikurse gibt es ab vier Jahren, meist mit Mittagsbetreuung. Die Kinder lernen in "
                        "kleinen Gruppen im Kinderland an der Talstation; am Ende der Woche gibt es ein Rennen mit "
                        "Medaille für alle."))
    parts.append(h("h2", "Unsere Partnerschulen"))
    parts.append(h("p", "In Frankreich arbeiten wir mit der École du Ski Français (ESF) zusammen, die in jedem Ort "
                        "deutschsprachige Lehrer stellt. In Österreich und der Schweiz sind es örtliche Skischulen, "
                        "die unsere Gruppen seit Jahren kennen. Treffpunkt ist meist direkt an der Talstation."))
    parts.append(h("h2", "Skikurs-Wochen"))
    parts.append(h("p", "In unseren Skikurs-Wochen in Obergurgl, Kitzbühel, Davos und Lech ist der Skikurs schon "
                        "im Reisepreis enthalten: fünf Vormittage à vier Stunden mit staatlich geprüften Skilehrern und "
                        "einem Abschlussrennen am letzten Tag."))
    return "\n".join(parts)


def page_ueber_uns(site: str) -> str:
    info = SITE_INFO[site]
    texts = {
        "ep-reisen": [
            "EP Reisen ist ein Familienunternehmen aus Köln. Elke und Jörg Pohlmann haben 1988 mit einem einzigen Bus "
            "und einer Gruppe des örtlichen Skiclubs angefangen; heute organisieren wir jedes Jahr mehr als 200 "
            "Gruppen-, Firmen- und Silvesterreisen.",
            "Unsere Stärke sind Reisen, die nicht von der Stange kommen: der Betriebsausflug mit Teamrennen, die "
            "Vereinsfahrt mit eigenem Bus oder die Silvesterreise mit Gala-Menü. Wir kennen die Unterkünfte, weil wir "
            "sie jedes Jahr selbst besuchen.",
            "Als Pauschalreiseveranstalter sind wir gegen Insolvenz abgesichert; mit der Buchung erhalten Sie einen "
            "Sicherungsschein. Die Busse stellen Partnerunternehmen aus dem Rheinland, mit denen wir seit Jahrzehnten "
            "zusammenarbeiten.",
        ],
        "ski-boarderweek": [
            "Die Boarderweek gibt es seit 2004. Angefangen hat alles mit zwei Snowboardern aus Freiburg, die für ihre "
            "Freunde einen Bus nach Les Deux Alpes gechartert haben. Heute fahren jeden Winter mehr als 3.000 Leute "
            "mit uns in die Berge.",
            "Unser Team besteht aus Leuten, die selbst jeden freien Tag auf der Piste stehen. Die Reiseleiter sind "
            "Studierende, Skilehrer und Snowboardlehrer, die die Orte kennen und wissen, wo der beste Schnee liegt.",
            "Was sich nicht geändert hat: Wir wollen, dass du eine Woche hast, über die du noch lange redest – mit "
            "guten Leuten, fairen Preisen und einer Unterkunft nah am Lift.",
        ],
        "snowzone": [
            "Snowzone organisiert seit 2009 Ski- und Snowboardcamps für Jugendliche sowie Uni-Skireisen für "
            "Studierende. Unser Büro ist in München-Schwabing, unsere Teamer kommen aus ganz Deutschland.",
            "Für die Camps gilt: Sicherheit zuerst. Jeder Teamer hat eine Ausbildung als Ski- oder Snowboardlehrer, "
            "einen Erste-Hilfe-Kurs und eine Schulung zur Aufsichtspflicht. Eltern erreichen uns während der Reise "
            "rund um die Uhr.",
            "Wir sind anerkannter Träger der Jugendhilfe und Mitglied im Bundesforum Kinder- und Jugendreisen.",
        ],
    }[site]
    parts = [h("h1", "Über uns")] + [h("p", t) for t in texts]
    parts.append(h("h2", "Unser Team"))
    parts.append(h("p", {
        "ep-reisen": "Im Büro in Köln-Porz arbeiten zwölf Kolleginnen und Kollegen, dazu kommen im Winter rund "
                     "dreißig Reiseleiter. Viele sind seit mehr als zehn Jahren dabei und kennen die Hoteliers in "
                     "Tirol, Savoyen und Graubünden persönlich.",
        "ski-boarderweek": "Im Freiburger Büro sitzen acht Leute, die Reisen planen, Busse buchen und dein Telefonat "
                           "annehmen. Im Winter sind über sechzig Reiseleiter unterwegs – die meisten waren selbst "
                           "einmal Gäste der Boarderweek.",
        "snowzone": "Acht Festangestellte in München und rund 120 Teamer im Winter. Die Teamer sind Studierende, "
                    "Lehrkräfte und Skilehrer, die in den Ferien Camps begleiten.",
    }[site]))
    parts.append(h("h2", "Nachhaltig unterwegs"))
    parts.append(h("p", V(
        "Ein voll besetzter Reisebus verursacht pro Person nur einen Bruchteil der Emissionen einer Autofahrt in die "
        "Alpen. Deshalb reisen alle unsere Gäste mit dem Bus an – und [[du sparst dir||Sie sparen sich]] Stau, "
        "Parkplatzsuche und Schneeketten. In den Unterkünften achten wir auf kurze Wege zum Lift, damit vor Ort "
        "niemand ein Auto braucht.", site)))
    parts.append(h("h2", "Kontakt"))
    parts.append(h("p", f"{esc(info['company'])}, {esc(info['street'])}, {esc(info['town'])}, Telefon {info['phone']}"))
    return "\n".join(parts)


def page_firmenreisen(site: str) -> str:
    parts = [h("h1", "Gruppen- und Firmenreisen")]
    parts.append(h("p", "Ab 20 Personen stellen wir Ihre Reise individuell zusammen: Reiseziel, Termin, Unterkunft und "
                        "Programm nach Ihren Wünschen. Ab 40 Personen fährt ein eigener Bus, der auch vor Ihrem "
                        "Firmensitz abfährt."))
    parts.append(h("h2", "Was wir für Sie organisieren"))
    parts.append(ul(["Busanreise mit eigenem Zustieg oder Zustieg in Köln, Frankfurt, Stuttgart und München",
                     "Unterkunft vom Sportclub bis zum Hotel, Zimmer im DZ oder EZ",
                     "Skipass, Skiverleih und Skikurs für Anfänger",
                     "Teamrennen mit Zeitnahme, Hüttenabend, Fackelwanderung oder Schneeschuhtour",
                     "Tagungsraum mit Beamer für Workshops am Nachmittag"]))
    parts.append(h("h2", "Beliebte Ziele"))
    parts.append(h("p", "Für kurze Firmenreisen eignen sich St. Anton am Arlberg, Ischgl und Zell am See in Österreich; "
                        "wer mehr Zeit hat, fährt in die 3 Vallées nach Méribel oder Courchevel. In der Schweiz "
                        "bieten Davos und Laax Tagungshotels direkt an der Piste."))
    parts.append(h("h2", "Für wen?"))
    parts.append(h("p", "Zu unseren Kunden gehören mittelständische Unternehmen aus dem Rheinland, Sportvereine, "
                        "Betriebssportgruppen, Schulen und Hochschulgruppen. Die kleinste Gruppe im letzten Winter hatte "
                        "22 Teilnehmer, die größte fuhr mit drei Bussen nach St. Anton."))
    parts.append(h("h2", "Ablauf und Angebot"))
    parts.append(h("p", "Schicken Sie uns Teilnehmerzahl, Wunschtermin und Budget; innerhalb von drei Werktagen "
                        "erhalten Sie ein Angebot. Die Rechnung stellen wir zentral auf Ihr Unternehmen aus, einzelne "
                        "Teilnehmer können Zusatzleistungen selbst zahlen. Geschlossene Gruppenreisen erscheinen nicht "
                        "in unserer Reisesuche."))
    return "\n".join(parts)


def page_ablauf_wochenende(site: str) -> str:
    parts = [h("h1", "So läuft ein Ski-Wochenende")]
    parts.append(h("p", "Du hast nur ein Wochenende und willst trotzdem drei volle Skitage? So geht's:"))
    steps = [
        ("Donnerstag, abends", "Abfahrt an deinem Zustieg, zum Beispiel in Köln um 19:30 Uhr, in Stuttgart gegen 0:30 "
                               "Uhr oder in München gegen 2:00 Uhr. Im Bus wird geschlafen."),
        ("Freitag", "Ankunft am Morgen, Skipass-Ausgabe am Bus und erster Skitag. Das Gepäck bleibt im Bus oder im "
                    "Skiraum, ab 17 Uhr sind die Zimmer bezugsfertig. Abends Après-Ski."),
        ("Samstag", "Ganzer Skitag. Wer mag, fährt mit der Reiseleitung die große Runde durchs Skigebiet."),
        ("Sonntag", "Check-out am Morgen, letzter Skitag bis Liftschluss. Gegen 17 Uhr fährt der Bus zurück."),
        ("Montag, früh", "Ankunft an den Zustiegsorten zwischen 1 und 6 Uhr – rechtzeitig für die Arbeit oder die Uni."),
    ]
    for t_, p_ in steps:
        parts.append(h("h2", t_))
        parts.append(h("p", p_))
    parts.append(h("h2", "Die Unterkünfte"))
    parts.append(h("p", "Wir wohnen in Sportclubs, Pensionen und Gästehäusern nah am Lift, zum Beispiel im Sportclub "
                        "Lederer in Zell am See oder in der Pension Gaislach in Sölden. Frühstück ist inklusive, "
                        "abends isst du im Ort oder im Haus."))
    parts.append(h("h2", "Was ins Handgepäck gehört"))
    parts.append(h("p", "Skikleidung, Helm, Brille, Handschuhe, Sonnencreme und ein Snack. Der große Koffer bleibt bis "
                        "zum Check-in im Bus oder im Skiraum. Wer eigene Ski dabeihat, bekommt sie bei der Ankunft "
                        "direkt aus dem Kofferraum."))
    parts.append(h("h2", "Ohne Skipass?"))
    parts.append(h("p", "Einige Wochenenden gibt es auch ohne Skipass – etwa Zell am See für alle mit Saisonkarte. "
                        "Der Skipass ist dann nicht im Preis enthalten und wird vor Ort gekauft."))
    return "\n".join(parts)


def page_teamer(site: str) -> str:
    parts = [h("h1", "Teamer werden")]
    parts.append(h("p", "Du fährst gut Ski oder Snowboard, bist mindestens 19 und hast Lust, Jugendlichen eine "
                        "unvergessliche Woche im Schnee zu machen? Dann werde Teamer bei Snowzone."))
    parts.append(h("h2", "Was du mitbringst"))
    parts.append(ul(["sicheres Fahren auf allen Pisten, idealerweise eine Lehrer-Ausbildung (DSV, SVD oder Verband)",
                     "Erfahrung mit Jugendgruppen, zum Beispiel aus Verein, Jugendarbeit oder Schule",
                     "einen Erste-Hilfe-Kurs, der nicht älter als zwei Jahre ist",
                     "ein erweitertes Führungszeugnis"]))
    parts.append(h("h2", "Was wir bieten"))
    parts.append(h("p", "Freie Reise, Unterkunft und Skipass, eine Aufwandsentschädigung pro Camp-Woche und die "
                        "Teamer-Schulung im Dezember in Les Deux Alpes. Dort lernst du alles über Aufsichtspflicht, "
                        "Lawinenkunde und Methodik – und das Team, mit dem du im Winter unterwegs bist."))
    parts.append(h("h2", "Häufige Fragen"))
    parts.append(h("p", "Muss ich Skilehrer sein? Nein, aber du solltest sicher auf allen Pisten fahren und Lust haben, "
                        "das weiterzugeben. Bekomme ich Urlaub dafür? Viele Arbeitgeber und Hochschulen stellen "
                        "Teamer für Jugendfreizeiten frei; wir stellen dir eine Bescheinigung aus."))
    parts.append(h("h2", "So läuft deine Saison"))
    parts.append(h("p", "Die meisten Teamer begleiten zwei bis vier Camps pro Winter, oft in den Weihnachts-, "
                        "Faschings- und Osterferien. Du entscheidest selbst, welche Wochen du übernimmst. Vor jedem "
                        "Camp gibt es eine Online-Besprechung mit dem Team, nach dem Camp eine kurze Auswertung."))
    parts.append(h("h2", "Bewerbung"))
    parts.append(h("p", "Bewirb dich bis Ende September mit einem kurzen Lebenslauf und einem Foto. Die "
                        "Kennenlerntage finden im Oktober in München statt."))
    return "\n".join(parts)


def page_empty_search(site: str) -> str:
    # Only a search form and a script-driven result list: nothing survives the conversion.
    return ('<form class="trip-search" action="/skireisen/suche/" method="get">'
            '<label for="q-region">Reiseziel</label><select id="q-region" name="region"><option>Alle Länder</option>'
            '<option>Frankreich</option><option>Österreich</option><option>Italien</option><option>Schweiz</option>'
            '</select><label for="q-date">Reisezeitraum</label><input id="q-date" name="period" type="text">'
            '<button type="submit">Reisen finden</button></form>\n'
            '<div id="search-results" data-endpoint="/api/search/trips" data-page-size="20"></div>\n'
            '<script src="/typo3conf/ext/trip_search/Resources/Public/JavaScript/search.min.js"></script>')


def page_empty_app(site: str) -> str:
    return ('<div id="wishlist-app" data-app="wishlist" data-storage="local"></div>\n'
            '<script type="module" src="/typo3conf/ext/wishlist/Resources/Public/JavaScript/app.js"></script>')


def page_empty_webcams(site: str) -> str:
    return ('<div class="webcam-grid" data-feed="https://webcams.example-feratel.invalid/snowzone.json"></div>\n'
            '<script>window.webcamConfig={refresh:300,lazy:true};</script>\n'
            '<script src="/typo3conf/ext/webcams/Resources/Public/JavaScript/webcams.js"></script>')


# site, uid hint, path, title, breadcrumb, renderer, flags ("entities", "empty", "bare")
INFO_PAGES = [
    ("ep-reisen", "/service/anreise-mit-dem-bus/", "Anreise mit dem Bus", ["Service"], page_anreise, "entities"),
    ("ep-reisen", "/service/zustiegsorte/", "Zustiegsorte", ["Service"], page_zustiege, ""),
    ("ep-reisen", "/service/reiseversicherung/", "Reiseversicherung", ["Service"], page_versicherung, ""),
    ("ep-reisen", "/agb/", "AGB", [], page_agb, ""),
    ("ep-reisen", "/ueber-uns/", "Über uns", [], page_ueber_uns, ""),
    ("ep-reisen", "/firmenreisen/", "Gruppen- und Firmenreisen", [], page_firmenreisen, ""),
    ("ep-reisen", "/impressum/", "Impressum", [], page_impressum, ""),
    ("ser", "/service/zustiegsorte/", "Zustiegsorte", ["Service"], page_zustiege, "bare"),
    ("ser", "/service/faq/", "Häufige Fragen (FAQ)", ["Service"], page_faq, ""),
    ("ser", "/service/skiverleih/", "Skiverleih", ["Service"], page_skiverleih, ""),
    ("ser", "/service/skikurse/", "Skikurse", ["Service"], page_kurse, ""),
    ("ser", "/service/reiseversicherung/", "Reiseversicherung", ["Service"], page_versicherung, ""),
    ("ser", "/agb/", "AGB", [], page_agb, ""),
    ("ser", "/impressum/", "Impressum", [], page_impressum, ""),
    ("ser", "/skireisen/suche/", "Skireisen-Suche", ["Skireisen"], page_empty_search, "empty"),
    ("ski-boarderweek", "/ueber-uns/", "Über uns", [], page_ueber_uns, ""),
    ("ski-boarderweek", "/faq/", "FAQ", [], page_faq, ""),
    ("ski-boarderweek", "/anreise/", "Anreise mit dem Bus", ["Service"], page_anreise, ""),
    ("ski-boarderweek", "/snowboardkurse/", "Snowboardkurse", ["Service"], page_kurse, ""),
    ("ski-boarderweek", "/impressum/", "Impressum", [], page_impressum, ""),
    ("ski-boarderweek", "/merkzettel/", "Merkzettel", [], page_empty_app, "empty"),
    ("ski-wochenenden", "/zustiege/", "Zustiegsorte", [], page_zustiege, ""),
    ("ski-wochenenden", "/ablauf/", "So läuft ein Ski-Wochenende", ["Wochenenden"], page_ablauf_wochenende, ""),
    ("ski-wochenenden", "/faq/", "FAQ", [], page_faq, ""),
    ("ski-wochenenden", "/agb/", "AGB", [], page_agb, ""),
    ("ski-wochenenden", "/impressum/", "Impressum", [], page_impressum, ""),
    ("snowzone", "/teamer-werden/", "Teamer werden", [], page_teamer, ""),
    ("snowzone", "/faq/", "Häufige Fragen", [], page_faq, "uid1204"),
    ("snowzone", "/skiverleih/", "Skiverleih", ["Service"], page_skiverleih, ""),
    ("snowzone", "/ueber-uns/", "Über uns", [], page_ueber_uns, ""),
    ("snowzone", "/reiseversicherung/", "Reiseversicherung", ["Service"], page_versicherung, ""),
    ("snowzone", "/impressum/", "Impressum", [], page_impressum, ""),
    ("snowzone", "/webcams/", "Webcams", [], page_empty_webcams, "empty"),
]


# --------------------------------------------------------------------------------------------
# Blog posts
# --------------------------------------------------------------------------------------------

def city_section(tk: str, n: int | None = None) -> list:
    uid, title, rk, alt, top, km, area, facts = CITIES[tk]
    t = {"title": title, "facts": facts, "area": area, "km": km, "top": top}
    head = f"{n}. {t['title']}" if n else t["title"]
    numbers = f" Das Gebiet {t['area']} hat rund {num(t['km'])} Pistenkilometer, die Lifte reichen bis auf {num(t['top'])} Meter."
    if "Pistenkilometer" in t["facts"][0] + t["facts"][1]:
        numbers = f" Die Lifte reichen bis auf {num(t['top'])} Meter."
    return [("h2", head),
            ("p", f"{t['facts'][0]} {t['facts'][1]}{numbers}"),
            ("p", t["facts"][2])]


# (site, slug, title, category, blocks); uid 5102 and its time are the contract's example
BLOGS = [
    ("snowzone", "die-ultimative-packliste", "Die ultimative Packliste für deine Skireise", "Tipps", [
        ("p", "Nichts ist ärgerlicher, als am ersten Skitag festzustellen, dass die Skibrille zu Hause liegt. Mit "
              "unserer Packliste vergisst du nichts – und nimmst trotzdem nicht zu viel mit, denn im Bus sind 20 kg "
              "pro Person erlaubt."),
        ("h2", "Auf der Piste"),
        ("ul", ["Skijacke und Skihose, wasserdicht", "Funktionsunterwäsche, zwei Garnituren", "Fleece oder dünne Daunenjacke",
                "Skisocken (mindestens drei Paar)", "Handschuhe, am besten ein Ersatzpaar", "Helm und Skibrille",
                "Sonnencreme mit hohem Lichtschutzfaktor und Lippenpflege", "Buff oder Halstuch"]),
        ("h2", "Für die Unterkunft"),
        ("ul", ["Hausschuhe oder dicke Socken", "Badesachen für Sauna oder Hallenbad", "Handtücher (in Apartments oft nicht inklusive)",
                "Ladegeräte und eine Powerbank", "Personalausweis, Krankenversicherungskarte und etwas Bargeld für die Kurtaxe"]),
        ("h2", "Im Bus"),
        ("p", "Die Nachtfahrt ist lang. Ein Nackenkissen, eine dünne Decke, Ohrstöpsel und Snacks machen sie deutlich "
              "angenehmer. Skikleidung gehört ins Handgepäck, damit du dich bei der Ankunft direkt umziehen kannst – die "
              "Zimmer sind meist erst ab 17 Uhr bezugsfertig."),
        ("h2", "Was du nicht brauchst"),
        ("p", "Föhn (gibt es fast überall), fünf Paar Schuhe und Jeans für jeden Abend. Nach dem Skifahren sind alle "
              "müde, und in der Bar fragt niemand nach deinem Outfit."),
    ]),
    ("snowzone", "lawinenkunde-fuer-einsteiger", "Lawinenkunde für Einsteiger", "Sicherheit", [
        ("p", "Tiefschnee neben der Piste ist verlockend – aber schon wenige Meter abseits der markierten Abfahrt "
              "beginnt ungesichertes Gelände. Wer dort unterwegs ist, sollte die Grundlagen der Lawinenkunde kennen. "
              "Dieser Artikel ersetzt keinen Kurs, hilft dir aber, die wichtigsten Begriffe zu verstehen."),
        ("h2", "Der Lawinenlagebericht"),
        ("p", "Jeden Morgen veröffentlichen die Lawinenwarndienste in Österreich, der Schweiz, Italien und Frankreich "
              "einen Lagebericht. Die europäische Gefahrenskala reicht von Stufe 1 (gering) bis Stufe 5 (sehr groß). "
              "Wichtig: Die meisten tödlichen Unfälle passieren bei Stufe 2 und 3 – also dann, wenn sich viele sicher "
              "fühlen."),
        ("h2", "Die Notfallausrüstung"),
        ("ul", ["LVS-Gerät (Lawinenverschüttetensuchgerät), eingeschaltet am Körper getragen", "Lawinenschaufel aus Metall",
                "Sonde mit mindestens 240 cm Länge", "Optional: Lawinenrucksack mit Airbag",
                "Ein geladenes Handy mit der Notrufnummer 112"]),
        ("p", "Die Ausrüstung nützt nur, wenn du sie beherrschst. Übe die Suche mit dem LVS-Gerät regelmäßig, zum "
              "Beispiel in einem der LVS-Trainingsparks, die viele Skigebiete kostenlos anbieten."),
        ("h2", "Drei Faustregeln"),
        ("p", "Erstens: Nie allein ins freie Gelände. Zweitens: Steilhänge über 30 Grad meiden, wenn die Lawinengefahr "
              "erheblich ist. Drittens: Frische Triebschneeansammlungen hinter Kuppen und in Rinnen sind besonders "
              "gefährlich. Wenn du unsicher bist, bleib auf der Piste – der nächste Powder-Tag kommt bestimmt."),
        ("h2", "Lawinenkurs im Snowzone Camp"),
        ("p", "In unseren Camps in Les Deux Alpes und Laax bieten wir einen halbtägigen Lawinen-Workshop mit einem "
              "staatlich geprüften Bergführer an. Der Kurs ist nicht im Preis enthalten; die Ausrüstung wird gestellt."),
    ]),
    ("snowzone", "skigebiete-in-oesterreich-top-5", "Skigebiete in Österreich: unsere Top 5", "Skigebiete",
     [("p", "Österreich ist für die meisten unserer Gäste das erste Skiland: kurze Anreise, Hütten mit Kaiserschmarrn "
            "und Après-Ski, das seinen Namen verdient. Fünf Skigebiete in Österreich, in die wir immer wieder fahren:")]
     + city_section("saa", 1) + city_section("isc", 2) + city_section("may", 3) + city_section("sol", 4)
     + city_section("zas", 5)
     + [("p", "Alle fünf erreichst du mit unseren Bussen über Nacht ab Köln, Frankfurt, Stuttgart oder München.")]),
    ("snowzone", "apres-ski-die-besten-huetten", "Après-Ski: Die besten Hütten der Alpen", "Après-Ski", [
        ("p", "Après-Ski ist mehr als laute Musik: Es ist der Moment, in dem der Skitag mit Freunden ausklingt. Wir "
              "haben unsere Reiseleiter nach ihren Lieblingsadressen gefragt."),
        ("h2", "Österreich: der Klassiker"),
        ("p", "Der Mooserwirt in St. Anton am Arlberg gilt als eine der bekanntesten Après-Ski-Hütten der Welt. In "
              "Saalbach zieht es viele in die Hinterhag-Alm, in Ischgl in die Bars an der Talstation der Silvrettabahn. "
              "Wichtig: Nach dem Après-Ski wird die letzte Abfahrt nicht leichter – wer nicht mehr sicher fährt, nimmt "
              "die Gondel ins Tal."),
        ("h2", "Frankreich: Party auf der Terrasse"),
        ("p", "In Val Thorens und Val d'Isère beginnt das Après-Ski schon am frühen Nachmittag auf den Terrassen am "
              "Berg, mit Livemusik und Tanz auf den Tischen. Um 17 Uhr geht es auf Ski zurück in den Ort."),
        ("h2", "Italien: Aperitivo statt Schlager"),
        ("p", "In Livigno und Madonna di Campiglio heißt Après-Ski vor allem Aperitivo: ein Spritz, ein paar Häppchen "
              "und der Blick auf die Berge. Lauter wird es erst nach dem Abendessen."),
        ("h2", "Unser Tipp"),
        ("p", "Trink zwischendurch Wasser, iss etwas und plane die Rückfahrt zur Unterkunft, bevor es dunkel wird. "
              "Dann stehst du am nächsten Morgen auch wieder als Erster am Lift."),
    ]),
    ("snowzone", "die-besten-snowparks-der-alpen", "Die besten Snowparks der Alpen", "Freestyle",
     [("p", "Kicker, Rails und Boxen für jedes Level: In diesen Skigebieten fahren unsere Camps und Uni-Reisen, weil die "
            "Parks zu den besten der Alpen gehören.")]
     + city_section("laa") + city_section("liv") + city_section("may") + city_section("l2a")
     + [("p", "Im Park gilt: Helm auf, erst anschauen, dann springen. Und niemals auf der Landung stehen bleiben.")]),
    ("snowzone", "skiopening-2026-hier-startet-die-saison", "Skiopening 2026: Hier startet die Saison zuerst", "News",
     [("p", "Die ersten Lifte laufen, bevor im Tal der erste Schnee fällt. Diese Skigebiete öffnen traditionell "
            "als Erste – und dorthin fahren auch unsere Skiopening-Reisen.")]
     + city_section("sol") + city_section("zas") + city_section("vt") + city_section("lm")
     + [("p", "Beim Skiopening sind meist nicht alle Pisten offen. Dafür ist die Stimmung besonders, und die Preise "
              "liegen oft unter denen der Hauptsaison.")]),
    ("snowzone", "ein-tag-im-leben-eines-teamers", "Ein Tag im Leben eines Snowzone-Teamers", "Team", [
        ("p", "Marie ist 23, studiert Sport in Köln und ist seit drei Wintern Teamerin bei Snowzone. Wir haben sie einen "
              "Tag lang im Camp in Les Deux Alpes begleitet."),
        ("h2", "7:00 Uhr: Wecken"),
        ("p", "„Der schwierigste Teil des Tages“, sagt Marie und lacht. Vierzehn Jugendliche müssen aus den Betten, "
              "zum Frühstück und bis 8:45 Uhr mit Helm am Lift stehen. Wer das Lunchpaket vergisst, holt es im Laufschritt."),
        ("h2", "9:00 Uhr: Coaching"),
        ("p", "Marie hat heute die Fortgeschrittenen-Gruppe im Snowpark. Erst wird gemeinsam aufgewärmt, dann geht es an "
              "die kleinen Kicker. Jeder Sprung wird gefilmt, abends schauen sie sich die Videos gemeinsam an."),
        ("h2", "16:30 Uhr: Zurück im Haus"),
        ("p", "Nach dem Skitag werden die Ski im Keller verstaut, dann ist Freizeit – zumindest für die Jugendlichen. "
              "Die Teamer besprechen den nächsten Tag, verteilen Pflaster und telefonieren mit Eltern."),
        ("h2", "22:00 Uhr: Nachtruhe"),
        ("p", "Nach dem Spieleabend gehen die Lichter aus. „Jeden Abend bin ich total kaputt“, sagt Marie, „aber wenn "
              "jemand zum ersten Mal über einen Kicker springt, weiß ich, warum ich das mache.“"),
    ]),
    ("snowzone", "fis-pistenregeln-einfach-erklaert", "Die FIS-Pistenregeln einfach erklärt", "Sicherheit", [
        ("p", "Auf der Piste gibt es keine Verkehrsschilder, aber Regeln: Der Internationale Skiverband FIS hat zehn "
              "Verhaltensregeln aufgestellt, die vor Gericht wie Verkehrsregeln behandelt werden."),
        ("ul", ["Rücksicht auf die anderen nehmen", "Geschwindigkeit und Fahrweise dem Können und dem Gelände anpassen",
                "Die Fahrspur so wählen, dass der Vorausfahrende nicht gefährdet wird",
                "Überholen mit ausreichendem Abstand, von oben oder unten, links oder rechts",
                "Vor dem Einfahren und Anfahren nach oben und unten schauen", "Nicht an engen oder unübersichtlichen Stellen anhalten",
                "Aufstieg und Abstieg nur am Rand der Piste", "Markierungen und Signale beachten",
                "Bei Unfällen Hilfe leisten", "Jeder Beteiligte muss bei einem Unfall seine Personalien angeben"]),
        ("h2", "Was das in der Praxis heißt"),
        ("p", "Der Vorausfahrende hat immer Vorrang – er sieht dich nicht. Wer unterhalb einer Kuppe stehen bleibt, ist "
              "für andere unsichtbar. Und wer nach einem Unfall einfach weiterfährt, begeht in Österreich und Italien "
              "eine Straftat."),
        ("h2", "Helm ist Pflicht – manchmal"),
        ("p", "In Italien gilt Helmpflicht für Kinder und Jugendliche, in Österreich für Kinder unter 15 Jahren. Wir "
              "empfehlen den Helm für alle; in unseren Camps ist er Pflicht."),
    ]),
    ("snowzone", "skigymnastik-fit-in-die-saison", "Skigymnastik: Fit in die Saison", "Fitness", [
        ("p", "Der erste Skitag ist der gefährlichste: Die Muskeln sind nicht vorbereitet, und gegen Nachmittag lässt "
              "die Konzentration nach. Mit drei Übungen, zweimal pro Woche, bist du in sechs Wochen deutlich fitter."),
        ("h2", "1. Wandsitzen"),
        ("p", "Mit dem Rücken an die Wand lehnen, die Knie im rechten Winkel beugen und 45 Sekunden halten. Dreimal "
              "wiederholen. Das stärkt die Oberschenkel, die beim Skifahren die meiste Arbeit leisten."),
        ("h2", "2. Seitliche Sprünge"),
        ("p", "Über eine Linie seitlich hin- und herspringen, 30 Sekunden lang, mit weichen Landungen. Das trainiert "
              "Koordination und Sprunggelenke – wichtig für Buckelpisten und den Snowpark."),
        ("h2", "3. Unterarmstütz"),
        ("p", "Die Planke stärkt den Rumpf und schützt den Rücken. Beginne mit 30 Sekunden und steigere dich jede "
              "Woche um zehn Sekunden."),
        ("h2", "Auf der Piste"),
        ("p", "Wärm dich morgens kurz auf, mach mittags eine echte Pause und hör auf, bevor du müde wirst. Die meisten "
              "Verletzungen passieren bei der „letzten Abfahrt“."),
    ]),
    ("snowzone", "helm-rueckenprotektor-und-co", "Helm, Rückenprotektor & Co.", "Sicherheit", [
        ("p", "Welche Schutzausrüstung brauchst du wirklich? Eine kurze Übersicht für Einsteiger und Parkfahrer."),
        ("h2", "Helm"),
        ("p", "Ein Helm gehört heute für alle Altersgruppen dazu. Achte auf die Norm EN 1077, einen festen Sitz und "
              "eine Skibrille, die ohne Lücke zur Stirn passt. Nach einem harten Sturz sollte der Helm ersetzt werden."),
        ("h2", "Rückenprotektor"),
        ("p", "Für den Snowpark und Freeride empfehlen wir einen Rückenprotektor, der als Weste oder Rucksack getragen "
              "wird. Auf der Piste ist er kein Muss, schadet aber nicht."),
        ("h2", "Handgelenkschoner und Protektorenhose"),
        ("p", "Snowboard-Anfänger fallen oft nach vorne auf die Hände. Handgelenkschoner verhindern viele Brüche. "
              "Eine gepolsterte Hose macht die ersten Tage auf dem Brett deutlich angenehmer."),
        ("h2", "Leihen oder kaufen?"),
        ("p", "Helme und Protektoren kannst du in unseren Partnerverleihen vor Ort leihen. Für regelmäßige "
              "Skireisen lohnt sich ein eigener Helm – er passt besser und ist hygienischer."),
    ]),
    ("snowzone", "uni-skireise-semesterferien-planen", "Uni-Skireise: So planst du die Semesterferien", "Tipps", [
        ("p", "Die Klausuren sind geschrieben, die Hausarbeit kann warten: Die Semesterferien sind die beste Zeit für "
              "eine Woche im Schnee. So klappt die Planung."),
        ("h2", "Früh buchen"),
        ("p", "Die Termine im Februar und März sind schnell ausgebucht, vor allem in Apartments für sechs Personen. "
              "Wer bis Ende Oktober bucht, bekommt die besten Plätze und den Frühbucherpreis."),
        ("h2", "Die WG mitnehmen"),
        ("p", "In Apartments wird pro Person gebucht. Wenn ihr als Gruppe bucht, wohnt ihr zusammen; wer allein "
              "kommt, wird mit anderen Studierenden zusammengelegt – das funktioniert erstaunlich gut."),
        ("h2", "Geld sparen"),
        ("p", "Mit Studierendenausweis gibt es in vielen Skigebieten einen ermäßigten Skipass, zum Beispiel in Val "
              "Thorens und Tignes. Selbstverpflegung spart viel: Gemeinsam kochen ist billiger als jeden Abend "
              "Restaurant. Kurtaxe und Kaution sind nicht im Preis enthalten – plane dafür etwa 100 € Bargeld ein."),
        ("h2", "Programm"),
        ("p", "Welcome-Party, Pubquiz, Schlittenabend und die Uni-Party am letzten Abend: Das Programm ist freiwillig, "
              "aber die meisten sind jeden Abend dabei."),
    ]),
    ("ski-boarderweek", "val-thorens-guide", "Val Thorens: Guide für das höchste Skigebiet Europas", "Skigebiete", [
        ("p", "Val Thorens liegt auf 2.300 Metern und ist damit der höchstgelegene Skiort Europas. Wer hier eine Woche "
              "Boarderweek verbringt, hat Schnee garantiert – und die größte Auswahl an Pisten, die man sich wünschen "
              "kann."),
        ("h2", "Die Pisten"),
        ("p", "Von Val Thorens aus erreicht man die ganzen 3 Vallées mit rund 600 Pistenkilometern. Die Cime Caron "
              "(3.195 m) bietet die schönste Aussicht, der Snowpark am Plateau Board ist einer der größten Frankreichs. "
              "Wer Lust auf eine Tagestour hat, fährt über Les Menuires und Méribel bis nach Courchevel und zurück."),
        ("h2", "Wohnen"),
        ("p", "Fast alle Unterkünfte liegen an der Piste. Unsere Gäste wohnen im Sportclub Le Schuss, im Hotel Chamois "
              "d'Or oder in der Résidence Val Chavière, deren Apartments am oberen Ortsrand mit Blick auf den "
              "Péclet-Gletscher liegen."),
        ("h2", "Abends"),
        ("p", "Nach Liftschluss trifft man sich auf den Terrassen an der Piste, später in den Bars im Zentrum. Wer es "
              "ruhiger mag, geht in die Sauna oder ins Schwimmbad des Sportzentrums."),
        ("h2", "Gut zu wissen"),
        ("p", "Auf 2.300 Metern ist die Luft dünn: Am ersten Tag viel trinken und es ruhig angehen lassen. Und "
              "unbedingt Sonnencreme – die Sonne ist in der Höhe deutlich stärker."),
    ]),
    ("ski-boarderweek", "boarderweek-tagebuch-les-deux-alpes", "Boarderweek-Tagebuch: Sieben Tage Les Deux Alpes",
     "Erfahrungsberichte", [
        ("p", "Tim (27) aus Mannheim war letzten Winter zum ersten Mal bei der Boarderweek. Für uns hat er Tagebuch "
              "geschrieben."),
        ("h2", "Samstag"),
        ("p", "Um 22 Uhr in Mannheim in den Bus, um 8 Uhr in Les Deux Alpes wieder raus. Geschlafen habe ich mehr, als "
              "ich dachte. Nach dem Frühstück direkt auf den Gletscher – Neuschnee!"),
        ("h2", "Montag"),
        ("p", "Heute zum ersten Mal im Snowpark. Die Reiseleitung hat eine Session für Einsteiger organisiert, ich "
              "habe meinen ersten 50-50 auf der Box gestanden. Abends Burger in der Bar, viel zu spät ins Bett."),
        ("h2", "Mittwoch"),
        ("p", "Whiteout am Vormittag, also lange Frühstück und nachmittags Freeride am Rand der Piste, immer in Sichtweite "
              "der Markierung. Abends Contest-Vorbereitung – ich bin nur Zuschauer."),
        ("h2", "Freitag"),
        ("p", "Letzter Skitag, Sonne, Pulverschnee. Die Abfahrt vom Gletscher bis ins Dorf ist 2.000 Höhenmeter lang, "
              "meine Oberschenkel brennen. Abschlussparty bis drei Uhr."),
        ("h2", "Fazit"),
        ("p", "Eine Woche mit Leuten, die ich vorher nicht kannte, und mit denen ich jetzt in einer Gruppe chatte. "
              "Nächstes Jahr fahre ich wieder mit – vielleicht nach Tignes."),
    ]),
    ("ski-boarderweek", "snowboard-bindung-richtig-einstellen", "Snowboard-Bindung richtig einstellen", "Material", [
        ("p", "Eine falsch eingestellte Bindung macht jeden Tag auf dem Board anstrengender. So stellst du sie in "
              "wenigen Minuten richtig ein."),
        ("h2", "Regular oder Goofy?"),
        ("p", "Steht bei dir der linke Fuß vorne, fährst du regular, sonst goofy. Im Zweifel: Lass dich von hinten "
              "leicht anschubsen – der Fuß, den du nach vorne setzt, ist dein vorderer."),
        ("h2", "Standbreite und Winkel"),
        ("p", "Die Standbreite entspricht etwa der Schulterbreite. Für Einsteiger empfehlen wir +15 Grad vorne und "
              "0 Grad hinten; wer viel im Park fährt, stellt beide Bindungen leicht nach außen, zum Beispiel +15 und -15 Grad."),
        ("h2", "Highback und Riemen"),
        ("p", "Der Highback sollte leicht nach vorne geneigt sein. Die Riemen sitzen fest, aber nicht so fest, dass die "
              "Füße einschlafen. Nach dem ersten Skitag lohnt es sich, alle Schrauben nachzuziehen."),
        ("h2", "Hilfe vor Ort"),
        ("p", "Bei der Boarderweek helfen dir die Reiseleiter gerne beim Einstellen. Werkzeug haben wir immer dabei."),
    ]),
    ("ski-boarderweek", "frankreich-skigebiete-im-vergleich", "Frankreich im Vergleich: 3 Vallées, Espace Killy, Paradiski",
     "Skigebiete", [
        ("p", "Frankreich hat die größten Skigebiete der Welt. Doch welches passt zu dir? Ein Vergleich der drei "
              "großen Verbünde in Savoyen."),
        ("h2", "Les 3 Vallées"),
        ("p", "Rund 600 Pistenkilometer zwischen Courchevel, Méribel, Les Menuires und Val Thorens. Perfekt für alle, "
              "die jeden Tag woanders fahren wollen. Val Thorens ist schneesicher, Les Menuires günstiger."),
        ("h2", "Espace Killy"),
        ("p", "Val d’Isère und Tignes bieten zusammen 300 Pistenkilometer bis auf 3.456 Meter. Der Grande-Motte-"
              "Gletscher macht das Gebiet besonders schneesicher, die Face de Bellevarde in Val d’Isère ist eine der "
              "anspruchsvollsten Pisten der Alpen."),
        ("h2", "Paradiski"),
        ("p", "La Plagne und Les Arcs sind über die Kabinenbahn Vanoise Express verbunden. Mit rund 425 Kilometern ist "
              "Paradiski ideal für Familien und Genießer, die lange, breite Pisten mögen."),
        ("h2", "Unser Fazit"),
        ("p", "Für die Boarderweek fahren wir nach Val Thorens und Tignes, weil dort Schnee und Snowparks am "
              "zuverlässigsten sind. Familien empfehlen wir Les Menuires und La Plagne."),
    ]),
    ("ski-boarderweek", "wachsen-leicht-gemacht", "Wachsen leicht gemacht", "Material", [
        ("p", "Ein frisch gewachstes Board gleitet besser, dreht leichter und schützt den Belag. Das Wachsen ist "
              "kein Hexenwerk – so geht es."),
        ("h2", "Was du brauchst"),
        ("ul", ["Wachsbügeleisen (kein Haushaltsbügeleisen)", "Wachs passend zur Schneetemperatur", "Plastikabzieher",
                "Strukturbürste", "eine feste Unterlage"]),
        ("h2", "Schritt für Schritt"),
        ("p", "Belag reinigen, Wachs auf das Bügeleisen tropfen lassen und gleichmäßig verteilen, ohne an einer Stelle "
              "stehen zu bleiben. Nach dem Abkühlen – mindestens 30 Minuten – das überschüssige Wachs mit dem "
              "Abzieher von der Spitze zum Ende abziehen und den Belag ausbürsten."),
        ("h2", "Wie oft?"),
        ("p", "Alle drei bis fünf Skitage. Bei der Boarderweek gibt es in den meisten Unterkünften einen Skiraum, in "
              "dem du dein Board am Abend wachsen kannst; Wachs verkaufen die Verleihe vor Ort."),
    ]),
    ("ski-wochenenden", "kurztrip-in-den-schnee", "Kurztrip in den Schnee: So lohnt sich ein Ski-Wochenende", "Tipps", [
        ("p", "Drei Skitage, ein Urlaubstag: Das Ski-Wochenende ist die effizienteste Art, in den Schnee zu kommen. Mit "
              "ein paar Tricks holst du das Maximum heraus."),
        ("h2", "Die Nacht im Bus nutzen"),
        ("p", "Wer im Bus schläft, steht ausgeruht auf der Piste. Nackenkissen, Ohrstöpsel und eine Schlafmaske helfen. "
              "Kaffee gibt es an der letzten Raststätte vor dem Skigebiet."),
        ("h2", "Der erste Skitag"),
        ("p", "Zieh dich im Bus um, lass das Gepäck im Skiraum und sei um 9 Uhr am Lift. Die Zimmer sind erst am "
              "Nachmittag fertig, aber die Pisten sind morgens am besten."),
        ("h2", "Die Wahl des Ziels"),
        ("p", "Für ein Wochenende zählt die Anreise: Zell am See, Saalbach und Mayrhofen erreichst du ab Stuttgart "
              "oder München in wenigen Stunden, Oberstdorf und der Feldberg sind noch näher. Wer schon einen Saisonpass "
              "hat, bucht das Wochenende ohne Skipass."),
        ("h2", "Der Sonntag"),
        ("p", "Check-out am Morgen, Gepäck in den Bus, dann bis Liftschluss fahren. Duschen kann man in den meisten "
              "Unterkünften auch nach dem Check-out."),
    ]),
    ("ski-wochenenden", "zell-am-see-und-kaprun", "Zell am See und Kaprun: Gletscher, See und Sportclub Lederer",
     "Skigebiete", [
        ("p", "Zell am See ist eines unserer beliebtesten Ziele für ein Ski-Wochenende. Der Ort liegt direkt am See, "
              "die Schmittenhöhe beginnt praktisch in der Fußgängerzone, und der Gletscher am Kitzsteinhorn ist nur "
              "20 Minuten entfernt."),
        ("h2", "Schmittenhöhe"),
        ("p", "Die Schmittenhöhe bietet breite, sonnige Pisten mit Blick auf den Zeller See und die Hohen Tauern. Ideal "
              "für Genießer und alle, die nach der Pause noch ein paar lockere Schwünge machen wollen."),
        ("h2", "Kitzsteinhorn"),
        ("p", "Auf dem Gletscher in Kaprun beginnt die Saison schon im Oktober. Hier finden auch unsere "
              "Skiopening-Reisen statt; die Pisten reichen bis auf 3.029 Meter."),
        ("h2", "Wohnen im Sportclub Lederer"),
        ("p", "Die meisten unserer Gäste wohnen im Sportclub Lederer, 150 Meter von der Fußgängerzone entfernt. Es gibt "
              "Mehrbettzimmer und DZ, eine Sauna und eine Bar, in der sich abends die ganze Gruppe trifft. Alternativen "
              "sind das Gästehaus Alpenrose und die Pension Zürcherhof."),
        ("h2", "Abends"),
        ("p", "Nach dem Après-Ski an der Talstation geht es in die Altstadt: Restaurants, Bars und im Winter eine "
              "Eisbahn am See."),
    ]),
    ("ski-wochenenden", "ischgl-mehr-als-party", "Ischgl: Mehr als Party", "Skigebiete", [
        ("p", "Ischgl hat einen Ruf als Partyort. Dabei ist das Skigebiet eines der besten in Österreich – und wer will, "
              "kann hier ganz ruhige Tage verbringen."),
        ("h2", "Schnee von oben"),
        ("p", "Die meisten Pisten der Silvretta Arena liegen über 2.000 Metern. Das macht Ischgl von Ende November bis "
              "Anfang Mai schneesicher. Die Abfahrt ins schweizerische Samnaun ist ein Muss – dort ist alles zollfrei."),
        ("h2", "Top of the Mountain"),
        ("p", "Zum Saisonstart und zum Saisonende spielen internationale Stars auf der Idalp. Das Konzert ist mit "
              "gültigem Skipass frei zugänglich, die Plätze sind begrenzt."),
        ("h2", "Ruhige Ecken"),
        ("p", "Wer es ruhig mag, fährt morgens auf die Pisten am Palinkopf, isst mittags in Samnaun und ist vor dem "
              "großen Andrang zurück im Tal. Die Pension Silvretta und das Gästehaus Fimba liegen etwas abseits des "
              "Zentrums."),
    ]),
    ("ski-wochenenden", "skifahren-im-allgaeu-oberstdorf", "Skifahren im Allgäu: Oberstdorf für Einsteiger", "Skigebiete",
     [("p", "Nicht jedes Ski-Wochenende muss nach Österreich gehen. Oberstdorf im Allgäu ist schnell erreicht, "
            "überschaubar und ideal für alle, die noch nicht lange auf Ski stehen.")]
     + city_section("obs")
     + [("h2", "Drei Gebiete, ein Skipass"),
        ("p", "Mit dem Skipass Oberstdorf Kleinwalsertal fährt man am Nebelhorn, am Fellhorn und an der Kanzelwand. "
              "Das Söllereck ist das Familiengebiet mit flachen Pisten und einer Skischule direkt an der Talstation."),
        ("h2", "Wohnen"),
        ("p", "Unsere Gäste wohnen im Gästehaus Nebelhorn, in der Pension Breitachklamm oder in der Ferienwohnung "
              "Fellhorn. Alle liegen in Gehweite zum Ortszentrum, der Skibus hält vor der Tür.")]),
    ("ser", "skiurlaub-mit-kindern-zehn-tipps", "Skiurlaub mit Kindern: Zehn Tipps", "Familie", [
        ("p", "Skiurlaub mit Kindern ist wunderbar – wenn die Planung stimmt. Unsere zehn Tipps aus vielen "
              "Familienwochen:"),
        ("ul", ["Ein Skiort mit kurzen Wegen: Unterkunft, Skischule und Übungshang sollten zu Fuß erreichbar sein.",
                "Den Kinderskikurs früh reservieren, in den Ferien sind die Plätze knapp.",
                "Helm ist Pflicht – in Österreich für Kinder unter 15 sogar gesetzlich.",
                "Handschuhe zum Wechseln einpacken, nasse Hände beenden jeden Skitag.",
                "Mittags eine echte Pause mit warmem Essen einplanen.",
                "Nicht zu viel vornehmen: Drei Stunden Skikurs sind für Vierjährige genug.",
                "Eine Unterkunft mit Halbpension (HP) spart abends Stress.",
                "Sonnencreme und Sonnenbrille auch bei Wolken.",
                "Die Busfahrt über Nacht: Kuscheltier, Schlafanzug und Kopfhörer nicht vergessen.",
                "Einen Ruhetag einplanen, zum Rodeln oder Schwimmen."]),
        ("h2", "Die richtige Unterkunft"),
        ("p", "Für Familien empfehlen wir Apartments mit Küche oder Gästehäuser mit Familienzimmern. Kinder unter 6 "
              "Jahren reisen im Zimmer der Eltern zum ermäßigten Preis."),
        ("h2", "Unsere Familienziele"),
        ("p", "Les Menuires, La Plagne und Avoriaz in Frankreich, Flachau in Österreich: Alle haben breite, leichte "
              "Pisten am Ortsrand und Kinderskischulen mit deutschsprachigen Lehrern."),
    ]),
    ("ser", "skigebiete-in-der-schweiz", "Skigebiete in der Schweiz: Zermatt, Saas-Fee, Laax und Davos", "Skigebiete",
     [("p", "Die Schweiz ist teurer als Österreich, aber die Skigebiete sind hoch, schneesicher und landschaftlich "
            "spektakulär. Unsere Busse fahren über Zürich; von dort sind es noch zwei bis vier Stunden.")]
     + city_section("zer") + city_section("saf") + city_section("laa") + city_section("dav")
     + [("h2", "Geld und Preise"),
        ("p", "In der Schweiz wird in Franken bezahlt. Ein Mittagessen am Berg kostet schnell 30 Franken; wer sparen "
              "will, nimmt ein Lunchpaket mit oder bucht Halbpension.")]),
    ("ser", "die-sellaronda-an-einem-tag", "Die Sellaronda an einem Tag", "Skigebiete",
     [("p", "Die Sellaronda ist die berühmteste Skirunde der Welt: rund 40 Kilometer um das Sellamassiv, über vier "
            "Pässe und durch vier ladinische Täler. So schaffen Sie sie an einem Tag.")]
     + city_section("wol") + city_section("can")
     + [("h2", "Im Uhrzeigersinn oder dagegen?"),
        ("p", "Die orange Runde (im Uhrzeigersinn) ist etwas anspruchsvoller, die grüne (gegen den Uhrzeigersinn) "
              "hat mehr Liftfahrten. Für beide brauchen geübte Skifahrer fünf bis sechs Stunden."),
        ("h2", "Unsere Tipps"),
        ("p", "Starten Sie spätestens um 9 Uhr, planen Sie die Mittagspause am Pordoijoch und behalten Sie die Uhr im "
              "Blick: Wer den letzten Lift verpasst, muss mit dem Taxi zurück – das ist nicht im Preis enthalten.")]),
    ("ser", "skipass-preise-2026-27", "Skipass-Preise 2026/27 im Überblick", "Tipps", [
        ("p", "Was kostet ein 6-Tage-Skipass in der Saison 2026/27? Wir haben die Preise der Skigebiete verglichen, "
              "in die wir fahren. Bei den meisten unserer Reisen ist der Skipass ohnehin inklusive – aber es lohnt sich "
              "zu wissen, was er wert ist."),
        ("table", ["Skigebiet", "Land", "6 Tage Erwachsene"], [
            ["Les 3 Vallées", "Frankreich", "ca. 395 €"], ["Espace Killy", "Frankreich", "ca. 345 €"],
            ["Skicircus Saalbach", "Österreich", "ca. 380 €"], ["Silvretta Arena Ischgl", "Österreich", "ca. 390 €"],
            ["Dolomiti Superski", "Italien", "ca. 375 €"], ["Zermatt", "Schweiz", "ca. 470 CHF"],
            ["Oberstdorf Kleinwalsertal", "Deutschland", "ca. 290 €"]]),
        ("p", "Die Preise sind Richtwerte vom Sommer 2026 und können sich ändern. Verbindlich sind die Preise der "
              "Reise in der Buchung."),
        ("h2", "Ohne Skipass buchen?"),
        ("p", "Wer einen Saisonpass hat, zum Beispiel den SuperSkiCard im Salzburger Land, bucht die Reise ohne "
              "Skipass. Der Reisepreis reduziert sich dann um den Skipassanteil."),
        ("h2", "Ermäßigungen"),
        ("p", "Kinder, Jugendliche, Studierende und Senioren zahlen weniger; in Frankreich fahren Kinder unter 5 Jahren "
              "meist kostenlos. Die Ermäßigungen werden bei der Buchung automatisch berücksichtigt."),
    ]),
    ("ep-reisen", "firmenevent-im-schnee", "Firmenevent im Schnee: So planen Sie den Teamausflug", "Firmenreisen", [
        ("p", "Ein paar Tage im Schnee schweißen ein Team zusammen wie kaum etwas anderes. Damit der Ausflug gelingt, "
              "sollten Sie früh planen – wir helfen dabei."),
        ("h2", "Der richtige Zeitpunkt"),
        ("p", "Januar und März sind ideal: Die Pisten sind leerer als in den Ferien, die Preise niedriger. Ein "
              "verlängertes Wochenende mit drei Nächten reicht für ein intensives Erlebnis."),
        ("h2", "Für alle Könnensstufen"),
        ("p", "Nicht jeder im Team fährt Ski. Planen Sie Alternativen ein: Schneeschuhwandern, Rodeln, Wellness oder "
              "einen Anfängerkurs. Beim Teamrennen mit Zeitnahme zählt die Mannschaft, nicht der Einzelne."),
        ("h2", "Budget"),
        ("p", "Rechnen Sie je nach Ziel mit 450 bis 900 € pro Person für drei Nächte mit Halbpension, Skipass und Bus. "
              "Kurtaxe und Getränke sind in der Regel nicht im Preis enthalten."),
        ("h2", "Unsere Ziele"),
        ("p", "St. Anton am Arlberg, die 3 Vallées und die Schweiz mit Davos und Laax sind unsere beliebtesten Ziele "
              "für Firmenreisen. Geschlossene Gruppen fahren auf Wunsch mit eigenem Bus ab Ihrem Firmensitz."),
    ]),
    ("ep-reisen", "silvester-in-den-bergen", "Silvester in den Bergen", "Reiseideen", [
        ("p", "Feuerwerk über verschneiten Gipfeln, Fackelabfahrt der Skilehrer und ein Gala-Menü: Silvester in den "
              "Bergen ist etwas Besonderes."),
        ("h2", "Ischgl"),
        ("p", "In Ischgl wird der Jahreswechsel mit einem großen Feuerwerk im Ortszentrum gefeiert. Unsere Gäste "
              "wohnen in der Pension Silvretta und im Gästehaus Fimba, nur wenige Minuten von der Silvrettabahn."),
        ("h2", "Madonna di Campiglio"),
        ("p", "In Madonna di Campiglio feiert man auf der Piazza mit Musik und Glühwein. Am Neujahrsmorgen sind die "
              "Pisten der Brenta-Dolomiten fast menschenleer."),
        ("h2", "Livigno"),
        ("p", "Für die jüngeren Gäste gibt es die Silvester-Boarderweek in Livigno, mit Party im Ort und einer "
              "Silvesternacht, die erst am Morgen endet."),
        ("h2", "Gut zu wissen"),
        ("p", "Die Silvesterreisen sind früh ausgebucht. Das Silvester-Menü ist inklusive, Getränke sind nicht im "
              "Preis enthalten."),
    ]),
    ("ep-reisen", "reiseversicherung-was-brauche-ich", "Reiseversicherung: Welche brauche ich wirklich?", "Service", [
        ("p", "Beim Buchen wird Ihnen eine Reiseversicherung angeboten – aber welche ist sinnvoll? Ein kurzer "
              "Überblick."),
        ("h2", "Unbedingt: Auslandskrankenversicherung"),
        ("p", "Ein Beinbruch in Österreich oder der Schweiz kann teuer werden: Bergung per Hubschrauber und "
              "Rücktransport zahlt die gesetzliche Krankenkasse nicht. Eine Jahrespolice kostet oft weniger als 20 €."),
        ("h2", "Sinnvoll: Reiserücktritt"),
        ("p", "Wer Monate im Voraus bucht, sollte sich gegen Stornokosten absichern. Sie fallen je nach Zeitpunkt in "
              "Höhe von 20 bis 90 Prozent des Reisepreises an."),
        ("h2", "Optional: Gepäck"),
        ("p", "Eine Gepäckversicherung lohnt sich nur für teure Ausrüstung. Prüfen Sie zuerst, ob Ihre "
              "Hausratversicherung Ski und Boards auf Reisen abdeckt."),
        ("h2", "Über uns buchen"),
        ("p", "Unsere Versicherungspakete können Sie bei der Buchung oder bis 30 Tage vor Reisebeginn abschließen. "
              "Sie sind nicht im Reisepreis enthalten."),
    ]),
]


# More text for the shorter posts (appended before the "Passende Reisen" box).
BLOG_EXTRA = {
    "wachsen-leicht-gemacht": [
        ("h2", "Kanten schleifen"),
        ("p", "Stumpfe Kanten rutschen auf hartem Schnee weg. Ein Kantenschleifer mit 88 Grad reicht für die meisten "
              "Fahrer; wer sich unsicher ist, lässt das im Verleih machen – das kostet vor Ort rund 25 € und ist nicht "
              "im Reisepreis enthalten."),
        ("h2", "Die häufigsten Fehler"),
        ("p", "Zu heißes Bügeleisen (das Wachs darf nicht rauchen), zu früh abziehen und die Bürste vergessen. "
              "Und: Wachs gehört auf den Belag, nie auf die Kanten oder die Oberseite."),
    ],
    "silvester-in-den-bergen": [
        ("h2", "Was Sie einpacken sollten"),
        ("p", "Für den Silvesterabend darf es etwas festlicher sein: ein Hemd oder Kleid für das Gala-Menü, warme "
              "Schuhe für das Feuerwerk im Freien und eine Stirnlampe für den Rückweg. Denken Sie an Ihren "
              "Personalausweis – an den Grenzen nach Österreich und Italien wird auch zwischen den Jahren kontrolliert."),
        ("h2", "Skifahren am Neujahrstag"),
        ("p", "Der 1. Januar ist einer der ruhigsten Skitage des Winters: Bis zum Mittag sind die Pisten fast leer. "
              "Die Lifte laufen wie gewohnt, der Skipass gilt auch an Feiertagen."),
    ],
    "reiseversicherung-was-brauche-ich": [
        ("h2", "Wann die Versicherung nicht zahlt"),
        ("p", "Wer einfach keine Lust mehr hat oder wegen Schneemangels absagen möchte, bekommt nichts erstattet. "
              "Versichert sind nur bestimmte Gründe wie Krankheit, Unfall, Schwangerschaft oder der Verlust des "
              "Arbeitsplatzes. Lesen Sie die Bedingungen vor dem Abschluss genau."),
        ("h2", "Familien und Gruppen"),
        ("p", "Für Familien gibt es günstige Familientarife; bei Gruppenreisen kann die Versicherung für alle "
              "Teilnehmer gemeinsam abgeschlossen werden."),
    ],
    "ischgl-mehr-als-party": [
        ("h2", "Wohnen im Paznaun"),
        ("p", "Die Unterkünfte in Ischgl sind in der Hochsaison teuer und schnell ausgebucht. Unsere Ski-Wochenenden "
              "nutzen deshalb kleine Häuser wie die Pension Silvretta, das Apart Paznaun und das Gästehaus Fimba. "
              "Frühstück ist inklusive, abends geht es in eines der vielen Restaurants im Ort."),
        ("h2", "Anreise"),
        ("p", "Von München bist du in rund vier Stunden in Ischgl. Unser Bus fährt am Donnerstagabend ab Köln, "
              "Frankfurt, Stuttgart und Ulm und ist am Freitagmorgen im Paznaun."),
    ],
    "helm-rueckenprotektor-und-co": [
        ("h2", "Die richtige Skibrille"),
        ("p", "Eine gute Brille schützt vor UV-Strahlung und Wind und verbessert bei diffusem Licht die Sicht. "
              "Orange und rosa Gläser sind Allrounder, dunkle Gläser nur für Sonnentage. Wer eine Brille trägt, "
              "braucht eine OTG-Skibrille, die über die eigene Brille passt."),
    ],
    "skifahren-im-allgaeu-oberstdorf": [
        ("h2", "Für Einsteiger"),
        ("p", "Am Söllereck gibt es einen Übungshang mit Zauberteppich, an dem auch Erwachsene ihre ersten Schwünge "
              "üben. Skikurse können wir dazubuchen; sie sind nicht im Preis enthalten."),
    ],
    "snowboard-bindung-richtig-einstellen": [
        ("h2", "Die Schuhe"),
        ("p", "Die beste Bindung nützt nichts, wenn die Boots nicht passen. Sie sollten fest sitzen, ohne zu drücken; "
              "die Ferse darf sich beim Vorlehnen nicht heben. Leih-Boots lassen sich vor Ort tauschen, wenn sie "
              "nach dem ersten Tag schmerzen."),
    ],
    "skigymnastik-fit-in-die-saison": [
        ("h2", "Dehnen nicht vergessen"),
        ("p", "Nach dem Training und nach dem Skitag: Oberschenkel, Waden und Hüfte jeweils 30 Sekunden dehnen. Das "
              "beugt Muskelkater vor und hält beweglich."),
    ],
    "frankreich-skigebiete-im-vergleich": [
        ("h2", "Anreise nach Savoyen"),
        ("p", "Unsere Busse fahren über Basel und Genf nach Savoyen, die Fahrt dauert je nach Zustieg zehn bis "
              "dreizehn Stunden. In den hochgelegenen Orten wie Val Thorens oder Tignes liegt man auf über 2.000 "
              "Metern – da lohnt sich die lange Fahrt."),
    ],
    "uni-skireise-semesterferien-planen": [
        ("h2", "Versicherung nicht vergessen"),
        ("p", "Die Auslandskrankenversicherung ist für Studierende oft schon über die Eltern abgedeckt – ein kurzer "
              "Blick in die Police lohnt sich."),
    ],
    "firmenevent-im-schnee": [
        ("h2", "Tagung und Ski kombinieren"),
        ("p", "Viele Gruppen nutzen den Vormittag für Workshops und fahren nachmittags Ski. In St. Anton, Davos und "
              "Laax buchen wir dafür Tagungsräume mit Technik; die Kosten sind nicht im Reisepreis enthalten."),
    ],
}

BLOG_RELATED_TITLE = ["Passende Reisen", "Lust bekommen?", "Unsere Reisen zum Thema"]


def related_trips(site: str, blocks: list, r: random.Random) -> list[dict]:
    text = " ".join(b[1] for b in blocks if isinstance(b[1], str))
    hits = [p for p in P if p["url"] and p["searchable"] and not p["unbookable"] and p["site"] == site
            and any(T[c]["title"] in text for c in p["hotel_cities"])]
    if len(hits) < 2:
        pool = [p for p in P if p["url"] and p["searchable"] and not p["unbookable"] and p["site"] == site
                and p not in hits]
        hits += r.sample(pool, min(3 - len(hits), len(pool)))
    return hits[:4]


def render_blocks(blocks: list) -> str:
    out = []
    for b in blocks:
        if b[0] == "ul":
            out.append(ul([esc(x) for x in b[1]]))
        elif b[0] == "table":
            out.append(table([esc(x) for x in b[1]], [[esc(c) for c in row] for row in b[2]]))
        else:
            out.append(h(b[0], esc(b[1])))
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Assembly: manifest items, records, pages
# --------------------------------------------------------------------------------------------

AUTHORS = ["Lena Hartmann", "Timo Wagner", "Jonas Brenner", "Sabine Roth", "Murat Yılmaz", "Anna-Lena Schäfer",
           "Felix Obermaier", "Chiara Bianchi"]
PAGE_ITEMS: list[dict] = []   # page items before uids are assigned


def content_url(url: str, bare: bool = False) -> str:
    cu = url + CONTENT_TYPE_QUERY
    if bare:
        cu = cu.replace("://www.", "://", 1)
    return cu


def add_page(site, url, title, crumbs, html_inner, *, detail_of=None, bare=False, flags="", modified=None,
             aside=True, uid=None):
    PAGE_ITEMS.append({"site": site, "url": url, "title": title, "crumbs": crumbs, "inner": html_inner,
                       "detail_of": detail_of, "bare": bare, "flags": flags, "modified": modified,
                       "aside": aside, "uid": uid})


def store_page(site: str, cu: str, title: str, crumbs: list[str], inner: str, aside: bool = True,
               body_class: str = "page") -> None:
    assert cu not in PAGES, cu
    PAGES[cu] = chrome(site, title, crumbs, inner, aside=aside, body_class=body_class)


def assemble_geo() -> None:
    for c in C.values():
        r = rng_for("mod-country", c["key"])
        url = site_url("ser", f"/skigebiete/{slug(c['title'])}/")
        cu = content_url(url) if c["own"] else None
        c["url"] = url
        item("country", c["uid"], stamp(r), c["title"], ["Skigebiete"], "ser", url, cu)
        if cu:
            store_page("ser", cu, f"Skireisen nach {c['title']}", ["Skigebiete"], country_page(c, "ser"))
    for reg in R.values():
        r = rng_for("mod-region", reg["key"])
        cn = C[reg["country"]]
        crumbs = ["Skigebiete", cn["title"]]
        if reg["key"] in REGIONS_NO_URL:
            item("region", reg["uid"], stamp(r), reg["title"], crumbs)
            continue
        url = site_url("ser", f"/skigebiete/{slug(cn['title'])}/{slug(reg['title'])}/")
        reg["url"] = url
        cu = content_url(url) if reg["key"] in REGIONS_OWN_PAGE else None
        item("region", reg["uid"], stamp(r), reg["title"], crumbs, "ser", url, cu)
        if cu:
            store_page("ser", cu, reg["title"], crumbs, region_page(reg, "ser"))
    for t in T.values():
        r = rng_for("mod-city", t["key"])
        cn = C[t["country"]]
        reg = R[t["region"]]
        crumbs = ["Skigebiete", cn["title"], reg["title"]]
        if t["key"] in CITIES_NO_URL:
            item("city", t["uid"], stamp(r), t["title"], crumbs)
            continue
        site = CITIES_OWN_PAGE.get(t["key"], "ser")
        if site == "ser":
            url = site_url(site, f"/skigebiete/{slug(cn['title'])}/{slug(reg['title'])}/{slug(t['title'])}/")
        else:
            url = site_url(site, f"/skigebiete/{slug(t['title'])}/")
        t["url"] = url
        cu = content_url(url) if t["key"] in CITIES_OWN_PAGE else None
        item("city", t["uid"], stamp(r), t["title"], crumbs, site, url, cu)
        if cu:
            store_page(site, cu, f"Skiurlaub in {t['title']}", crumbs, city_page(t, site))


def assemble_concepts() -> None:
    for k in K.values():
        r = rng_for("mod-concept", k["key"])
        if not k["site"]:
            item("concept", k["uid"], stamp(r), k["title"], ["Reisearten"])
            continue
        url = site_url(k["site"], k["path"])
        cu = content_url(url) if k["own"] else None
        item("concept", k["uid"], stamp(r), k["title"], ["Reisearten"], k["site"], url, cu)
        if cu:
            store_page(k["site"], cu, k["title"], ["Reisearten"], concept_page(k, k["site"]))


def product_path(p: dict) -> str:
    if "path" in p["opt"]:
        return p["opt"]["path"]
    cs = slug(C[p["country"]]["title"])
    title = p["title"]
    ohne = " ohne Skipass" in title
    base = title.replace(" ohne Skipass", "")
    tail = "-ohne-skipass" if ohne else ""
    s = p["site"]
    if s == "ski-boarderweek":
        first, rest = base.split(" ", 1)
        return f"/reisen/{cs}/{slug(rest + ' ' + first)}{tail}/"
    if s == "snowzone":
        return f"/{'camps' if p['concept'] == 'camp' else 'reisen'}/{slug(base)}{tail}/"
    if s == "ski-wochenenden":
        if p["concept"] == "we":
            return f"/wochenenden/{cs}/{slug(p['label'])}{tail}/"
        return f"/skiopening/{slug(p['label'])}/"
    if s == "ser":
        return f"/skireisen/{cs}/{slug(base)}{tail}/"
    return f"/reisen/{slug(base)}{tail}/"


def product_crumbs(p: dict) -> list[str]:
    first = {"ski-boarderweek": "Reisen", "snowzone": "Camps" if p["concept"] == "camp" else "Reisen",
             "ski-wochenenden": "Wochenenden" if p["concept"] == "we" else "Skiopening",
             "ser": "Skireisen", "ep-reisen": "Reisen"}[p["site"]]
    crumbs = [first, C[p["country"]]["title"]]
    if p["crumb_place"]:
        crumbs.append(p["crumb_place"])
    return crumbs


def assemble_products() -> None:
    for p in P:
        r = rng_for("mod-product", p["uid"])
        p["crumbs"] = product_crumbs(p)
        modified = "2026-11-12T09:14:00+01:00" if p["uid"] == 1204 else stamp(r)
        if p["page"] == "nourl":
            p["url"] = None
            item("product", p["uid"], modified, p["title"], p["crumbs"])
            continue
        p["url"] = site_url(p["site"], product_path(p))
        cu = content_url(p["url"]) if p["page"] == "own" else None
        item("product", p["uid"], modified, p["title"], p["crumbs"], p["site"], p["url"], cu)
        if cu:
            store_page(p["site"], cu, p["title"], p["crumbs"], product_page(p), body_class="product")
    for p in P:
        if p["page"] != "detail":
            continue
        r = rng_for("page-title", p["uid"])
        variant = "unbookable" if p["unbookable"] else "reiseverlauf"
        suffix = "Termine folgen" if p["unbookable"] else r.choice(["Reiseverlauf", "Reiseinfos", "Reiseverlauf & Leistungen"])
        if p["uid"] == 1204:
            suffix = "Reiseverlauf"
        add_page(p["site"], p["url"], f"{p['title']} – {suffix}", p["crumbs"], product_page(p, variant),
                 detail_of=ref("product", p["uid"]), bare=p["opt"].get("bare_host", False),
                 modified="2026-11-20T16:02:11+01:00" if p["uid"] == 1204 else None,
                 uid=3310 if p["uid"] == 1204 else None)
        if p["uid"] == 1204:
            add_page(p["site"], p["url"] + "leistungen/", f"{p['title']} – Leistungen & Preise", p["crumbs"],
                     product_page(p, "leistungen"), detail_of=ref("product", p["uid"]))


def assemble_hotels() -> None:
    for code, hh in H.items():
        r = rng_for("mod-hotel", code)
        t = T[hh["city"]]
        crumbs = ["Unterkünfte", C[t["country"]]["title"], t["title"]]
        path = (f"/hotels/{slug(hh['title'])}/" if hh["site"] == "ep-reisen"
                else f"/unterkuenfte/{slug(t['title'])}/{slug(hh['title'])}/")
        if hh["site"] is None:
            hh["url"] = None
            item("hotel", hh["uid"], stamp(r), hh["title"], crumbs)
            if "detail" in hh["flags"]:
                # no site of its own, but a page on ser details it (and lends it its url)
                url = site_url("ser", path)
                add_page("ser", url, f"{hh['title']} in {t['title']}", crumbs, hotel_page(hh, "ser"),
                         detail_of=ref("hotel", hh["uid"]))
            continue
        hh["url"] = site_url(hh["site"], path)
        cu = content_url(hh["url"]) if "own" in hh["flags"] else None
        item("hotel", hh["uid"], stamp(r), hh["title"], crumbs, hh["site"], hh["url"], cu)
        if cu:
            store_page(hh["site"], cu, hh["title"], crumbs, hotel_page(hh, hh["site"]), body_class="hotel")
        if "detail" in hh["flags"]:
            title = r.choice([f"{hh['title']} in {t['title']}", f"{hh['title']} – Unterkunft", hh["title"]])
            add_page(hh["site"], hh["url"], title, crumbs, hotel_page(hh, hh["site"]),
                     detail_of=ref("hotel", hh["uid"]))


def assemble_info_pages() -> None:
    for site, path, title, crumbs, fn, flags in INFO_PAGES:
        inner = fn(site)   # empty pages have no heading: only chrome, a form or an app container
        if "entities" in flags:
            inner = entity_encode(inner)
        add_page(site, site_url(site, path), title, crumbs, inner, bare="bare" in flags, flags=flags,
                 aside="empty" not in flags, uid=1204 if "uid1204" in flags else None)


def assemble_pages() -> None:
    counter = 3301
    for pg in PAGE_ITEMS:
        if pg["uid"] is None:
            if counter == 3310:
                counter += 1
            pg["uid"] = counter
            counter += 1
        r = rng_for("mod-page", pg["uid"], pg["url"])
        modified = pg["modified"] or stamp(r)
        cu = content_url(pg["url"], pg["bare"])
        item("page", pg["uid"], modified, pg["title"], pg["crumbs"], pg["site"], pg["url"], cu, pg["detail_of"])
        store_page(pg["site"], cu, pg["title"], pg["crumbs"], pg["inner"], aside=pg["aside"])


def assemble_blogs() -> None:
    for i, (site, bslug, title, cat, blocks) in enumerate(BLOGS):
        uid = 5101 + i
        r = rng_for("blog", uid)
        modified = "2026-10-02T11:40:00+02:00" if uid == 5102 else stamp(r, "2026-06-01", "2026-11-28")
        url = site_url(site, f"/blog/{bslug}/")
        cu = content_url(url)
        crumbs = ["Blog", cat]
        item("blog", uid, modified, title, crumbs, site, url, cu)
        date = datetime.fromisoformat(modified[:19])
        meta = (f'<p class="meta"><time datetime="{modified[:10]}">{date.day}.{date.month:02d}.{date.year}</time> · '
                f'{esc(r.choice(AUTHORS))} · {esc(cat)}</p>')
        blocks = blocks + BLOG_EXTRA.get(bslug, [])
        inner = h("h1", esc(title)) + "\n" + meta + "\n" + render_blocks(blocks)
        trips = related_trips(site, blocks, r)
        inner += "\n" + h("h2", r.choice(BLOG_RELATED_TITLE)) + "\n" + ul(
            [f'<a href="{p["url"]}">{esc(p["title"])}</a>: {esc(p["teaser"])}' for p in trips])
        store_page(site, cu, title, crumbs, inner, body_class="blog")


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------

TYPE_ORDER = ["country", "region", "city", "concept", "hotel", "product", "page", "blog"]


def page_file(cu: str) -> Path:
    parts = urlsplit(cu)
    path = parts.path.strip("/")
    return FEED / "pages" / parts.netloc / path / "index.html"


def write_output() -> None:
    if FEED.exists():
        shutil.rmtree(FEED)
    (FEED / "pages").mkdir(parents=True)
    items = sorted(ITEMS, key=lambda it: (TYPE_ORDER.index(it["type"]), it["uid"]))
    manifest = {"generatedAt": GENERATED_AT, "sites": SITES, "items": items}
    (FEED / "manifest.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    records = sorted(RECORDS, key=lambda rc: (TYPE_ORDER.index(rc["type"]), rc["uid"]))
    (FEED / "records.json").write_text(json.dumps({"records": records}, ensure_ascii=False, indent=2) + "\n",
                                       encoding="utf-8")
    for cu, doc in PAGES.items():
        f = page_file(cu)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(doc, encoding="utf-8")


# --------------------------------------------------------------------------------------------
# The booking system's product export and BusPro's hotel.xml (docs/contracts/ski-product-export.md)
# --------------------------------------------------------------------------------------------
#
# Built from the same products (P) and hotels (H) as the feed, after it, with generators of their
# own (rng_for("export", ...)), so the feed stays byte-for-byte what it was.

EXPORT = HERE / "export"
BUSPRO = HERE / "buspro"
EXPORT_GENERATED_AT = "2026-11-30T21:55:00+01:00"
HOTELXML_GENERATED = "2026-11-30T05:00:00+01:00"
DATA_AS_OF = date(2026, 11, 30)

# TYPO3 product codes with no export entry, and those listed with no dates at all
EXPORT_MISSING = {"SKLEP"}
EXPORT_NO_DATES = {"SOCEP"}
# Self-arrival products: the bus is a bookable extra, not an inclusion
EIGENANREISE = {"SWZSO", "STCHP", "SWKAP"}
EIGEN_BUS_PRICE = 79.0
# A date on which every hotel is sold out
SOLD_OUT_DATE = ("SXISP", date(2026, 12, 27))
# Weeks that start on Sunday (Sun–Sun) instead of Saturday
SUNDAY_WEEKS = {"SOZEP", "SODOP", "SKDVP", "SCLXP", "SFAVP", "SBWAH"}
# Sun 28.03.2027: summer time starts while the bus is on its way (pickups before and after 02:00 → 03:00)
DST_DATE = ("SODOP", date(2027, 3, 28))

# Product codes BusPro exports that no TYPO3 product has (code, concept, hotel codes, nights)
UNMATCHED_PRODUCTS = [
    ("SWKAP", "we", ["LEDWO", "ALROS", "ZSGLO"], 2),
]

# Hotels BusPro knows and TYPO3 does not: matchcodes, BusPro's name, city, TYPO3-like type for rooms
BUSPRO_ONLY = [
    (["VEDEL"], "Vacanceole Résidence L'Edelweiss", "lm", 3),
    (["VTPEC"], "Résidence Le Peclet VT – Zusatzkontingent Uni", "vt", 3),
    (["ZSGLO", "ZSGL2"], "Hotel Glocknerhof ZaS Ausweichquartier WE", "zas", 4),
    (["SOBRU"], "NEU Haus Brunnenkogel Sölden 26/27 – Opening & WE <nur Gruppen>", "sol", 4),
]
# which products book them (in addition to their TYPO3 hotels)
BUSPRO_ONLY_USE = {"SSLMP": "VEDEL", "SFLMP": "VEDEL", "SSVTP": "VTPEC", "SUVTP": "VTPEC",
                   "SWZSP": "ZSGLO", "SSSOP": "SOBRU", "SWSOP": "SOBRU"}

# BusPro's own names for TYPO3 hotels where the wording is fixed; the rest follow NAME_PATTERNS
BUSPRO_NAMES = {
    "LEDER": "NEU Sportclub Lederer Wochenenden und Kurztrips",
    "CHMOR": "VT Chamois d'Or HP-Kontingent 26/27",
    "VTCHA": "VT Val Chavière Selbstverpfleger",
    "EDELW": "LM Edelweiss Vacanceole (Kontingent SBW/SZ)",
    "AIME2": "Pierre & Vacances Aime 2000 – Paradiski",
    "PENKE": "Haus Penken Mayrhofen SPORTCLUB (alt: Penken 2)",
    "GIGGI": "Sportclub Giggijoch Sölden \"Hochsölden\"",
}
NAME_PATTERNS = ["{CITY} {short}", "{short} Kontingent 26/27", "NEU {short}", "{short} ({city})",
                 "{short} {CITY} – WE+Woche", "{CITY} {short} HP", "{short}"]
SHORTEN = [("Résidence ", "Rés. "), ("Sportclub ", "SC "), ("Appartements ", "App. "), ("Apartments ", "App. "),
           ("Ferienwohnungen ", "FeWo "), ("Ferienwohnung ", "FeWo "), ("Gästehaus ", "GH "), ("Pension ", "Pens. ")]

# room code: label, minPax, maxPax, price factor
ROOM_TYPES = {
    "DZ": ("Doppelzimmer", 2, 2, 1.0),
    "DZDU": ("Doppelzimmer mit Dusche/WC", 2, 2, 1.0),
    "DZE": ("Doppelzimmer zur Alleinbenutzung", 1, 1, 1.25),
    "EZ": ("Einzelzimmer", 1, 1, 1.18),
    "3BZ": ("3-Bett-Zimmer", 2, 3, 0.93),
    "4BZ": ("4-Bett-Zimmer", 3, 4, 0.87),
    "FAM4": ("Familienzimmer für 4 Personen", 3, 4, 0.9),
    "MB4": ("Bett im 4er-Zimmer (mit anderen)", 1, 1, 0.8),
    "MB6": ("Bett im 6er-Zimmer (mit anderen)", 1, 1, 0.76),
    "LAGER": ("Mehrbettzimmer, Bett im Lager", 1, 1, 0.7),
    "GR10": ("Gruppenraum für 10 Personen", 8, 10, 0.72),
    "STU2": ("Studio für 2 Personen", 2, 2, 1.05),
    "APP4": ("Appartement für 4 Personen", 3, 4, 0.9),
    "APP5": ("Appartement für 5 Personen", 4, 5, 0.86),
    "APP6": ("Appartement für 6 Personen", 4, 6, 0.82),
    "APP8": ("Appartement für 8 Personen", 6, 8, 0.78),
    "APP10": ("Appartement für 10 Personen", 8, 10, 0.74),
    "MBA4": ("Bett im 4er-Appartement (mit anderen)", 1, 1, 0.8),
    "FEWO4": ("Ferienwohnung für 4 Personen", 3, 4, 0.9),
    "FEWO6": ("Ferienwohnung für 6 Personen", 4, 6, 0.82),
    "FEWO9": ("Ferienwohnung für 9 Personen", 7, 9, 0.75),
    "CH12": ("Chalet-Appartement für 12 Personen", 9, 12, 0.7),
}
ROOM_POOLS = {  # by TYPO3 hotel type, in the order BusPro lists them
    2: ["DZ", "EZ", "3BZ", "4BZ", "MB4", "MB6", "LAGER", "GR10"],
    3: ["STU2", "APP4", "APP5", "APP6", "APP8", "APP10", "MBA4"],
    1: ["FEWO4", "FEWO6", "APP8", "FEWO9", "CH12"],
    4: ["DZDU", "EZ", "DZE", "3BZ", "FAM4", "MB4"],
    5: ["DZDU", "EZ", "DZE", "3BZ", "FAM4"],
}
BABY = {"code": "Baby", "label": "Baby (0–2 Jahre)", "status": "frei", "available": 99, "minPax": 0, "maxPax": 1,
        "price": 0.0}

# Pickup places (BusPro "Zustiege"): the route stops of the product pages, plus a few only BusPro lists.
EXTRA_STOPS = {  # country route -> (city, meeting point, minutes after the route's first stop)
    "fr": [("Bern", "Carterminal Neufeld", 470)],
    "at": [("Kufstein", "Bahnhof, Busparkplatz Süd", 575), ("Salzburg", "Messezentrum, Parkplatz P1", 590)],
    "it": [("Innsbruck", "Hauptbahnhof, Südtiroler Platz", 680)],
    "ch": [("Winterthur", "Carparkplatz Schützenwiese", 560), ("Bregenz", "Bahnhof, Busterminal", 500)],
    "de": [("Augsburg", "P+R Augsburg-West", 490)],
    "fel": [("Offenburg", "ZOB, Rheinstraße", 300)],
}
PICKUP_IDS: dict[str, int] = {}   # place -> BusPro id (stable across dates)

GUIDES = ["Jonas Weber", "Lisa Brandt", "Kevin Schulte", "Marie Hoffmann", "Felix Krämer", "Sophie Lang",
          "Niklas Berger", "Hannah Vogel", "Lukas Meier", "Paula Zimmermann", "Tim Schreiber", "Clara Neumann",
          "Moritz Fuchs", "Emily Schäfer", "David Yılmaz", "Laura Keller", "Jannik Roth", "Mia Schröder"]

HOLIDAY_WEEKS = [date(2026, 12, 26), date(2027, 1, 2), date(2027, 2, 13), date(2027, 2, 20), date(2027, 3, 27),
                 date(2027, 4, 3)]


def weekly(first: date, last: date) -> list[date]:
    out, d = [], first
    while d <= last:
        out.append(d)
        d += timedelta(days=7)
    return out


def pick(r: random.Random, pool: list, lo: int, hi: int) -> list:
    n = min(len(pool), r.randint(lo, hi))
    return sorted(r.sample(pool, n))


def plan_dates(code: str, concept: str, nights: int, r: random.Random) -> list[tuple[date, int]]:
    """Start dates and nights of one product, by concept."""
    sun = 1 if code in SUNDAY_WEEKS else 0
    if code == "SZTDA":
        return [(d, 5) for d in pick(r, weekly(date(2026, 11, 15), date(2026, 12, 13)), 4, 5)]
    if code == "SGGER":
        return [(d, 4) for d in [date(2027, 1, 14), date(2027, 2, 4), date(2027, 3, 4), date(2027, 3, 18)]]
    if code == "SBWSF":
        return [(d, 7) for d in weekly(date(2027, 3, 27), date(2027, 4, 17))]
    if concept == "we":
        out = []
        for d in pick(r, weekly(date(2026, 12, 4), date(2027, 3, 26)), 10, 12):
            out.append((d, 3 if r.random() < 0.25 else 2))          # Fri–Sun, some Fri–Mon
        return out
    if concept == "so":
        if nights == 3:                                              # Fri–Mon
            return [(d, 3) for d in pick(r, weekly(date(2026, 11, 13), date(2026, 12, 18)), 4, 6)]
        out = []
        for d in pick(r, weekly(date(2026, 11, 12), date(2026, 12, 17)), 4, 6):
            out.append((d - timedelta(days=1), 5) if r.random() < 0.2 else (d, 4))   # Thu–Mon, some Wed–Mon
        if code == "SSLMP":                                          # the contract's SSLMP061226, a Sun–Sun week
            out.append((date(2026, 12, 6), 7))
        return sorted(out)
    if concept == "sil":
        return [(date(2026, 12, 26), 7), (date(2026, 12, 27), 6), (date(2026, 12, 28), 5), (date(2026, 12, 29), 4)]
    if concept in ("camp", "fam"):
        starts = pick(r, HOLIDAY_WEEKS, 4, 6)
    elif concept == "bw":
        starts = pick(r, weekly(date(2026, 12, 12), date(2027, 4, 10)), 7, 12)
    elif concept == "uni":
        starts = pick(r, weekly(date(2027, 1, 30), date(2027, 3, 20)), 5, 8)
    elif concept == "ost":
        starts = pick(r, weekly(date(2027, 3, 13), date(2027, 4, 10)), 4, 5)
        if code == DST_DATE[0] and date(2027, 3, 27) not in starts:  # Sun 28.03.: DST starts on the bus ride
            starts = sorted(starts + [date(2027, 3, 27)])
    elif concept == "kurs":
        starts = pick(r, weekly(date(2027, 1, 9), date(2027, 3, 20)), 7, 11)
    elif concept == "firm":
        return [(d, 4 if r.random() < 0.3 else 3) for d in pick(r, weekly(date(2027, 1, 14), date(2027, 3, 18)), 5, 8)]
    else:
        raise ValueError(concept)
    out = []
    for d in starts:
        d = d + timedelta(days=sun)
        n = 5 if concept == "uni" and r.random() < 0.15 else 7       # a few 5-night "Kurzwochen"
        out.append((d, n))
    return out


def season_factor(d: date) -> float:
    if date(2026, 12, 19) <= d <= date(2027, 1, 3):
        return 1.18
    if d < date(2026, 12, 19):
        return 0.95
    if d.month == 1:
        return 0.94
    if d.month == 2:
        return 1.1
    if d.month == 3:
        return 1.04 if d >= date(2027, 3, 20) else 1.0
    return 0.9


def price_round(x: float, lo: float, hi: float, r: random.Random) -> float:
    if x < lo + 1:                                   # spread, rather than stack, what falls off the band
        x = lo + r.uniform(1, 30)
    elif x > hi - 1:
        x = hi - r.uniform(1, 60)
    u = r.random()
    if u < 0.7:
        v = round(x / 10) * 10 - 1.0                 # 649.0
    elif u < 0.9:
        v = int(x) + 0.5                             # 387.5
    else:
        v = float(round(x / 5) * 5)                  # 455.0
    return min(max(v, lo), hi)


def price_band(nights: int) -> tuple[float, float]:
    if nights <= 3:
        return 149.0, 399.0
    if nights >= 7:
        return 399.0, 1290.0
    return 249.0, 1090.0


BASE_PRICE = {"we": (179, 229), "bw": (549, 699), "camp": (599, 749), "uni": (429, 549), "sil": (749, 899),
              "ost": (599, 799), "fam": (549, 699), "kurs": (649, 799), "firm": (359, 449)}


def base_price(code: str, concept: str, nights: int, editorial: int | None, r: random.Random) -> float:
    if editorial:
        return editorial * r.uniform(0.97, 1.1)      # BusPro may contradict the editorial "ab" price
    if concept == "so":
        return r.uniform(269, 329) if nights == 3 else r.uniform(329, 429)
    if code == "SZTDA":
        return 349.0
    if code == "SGGER":
        return 389.0
    lo, hi = BASE_PRICE[concept]
    return r.uniform(lo, hi)


BERLIN_DST = (datetime(2027, 3, 28, 1, 0), datetime(2027, 10, 31, 1, 0))   # UTC, summer time 2027


def berlin(utc: datetime) -> str:
    off = 2 if BERLIN_DST[0] <= utc < BERLIN_DST[1] else 1
    local = utc + timedelta(hours=off)
    return local.strftime("%Y-%m-%dT%H:%M:%S") + f"+0{off}:00"


def board_items(board: str, nights: int, style: int, r: random.Random) -> list[dict]:
    """Group 71. "Halbpension" is never a label: dinner is "Nx Abendessen"."""
    n = nights
    it = lambda label, price=0.0: {"label": label, "price": float(price)}  # noqa: E731
    if board == "4xAE":
        items = [it(f"{n}x Abendessen")]
        if style:
            items.append(it("Frühstück", price_round(9.5 * n, 20, 120, r)))
    elif board == "6xAE":
        items = [it(f"{n - 1}x Abendessen")]
    elif board == "HP":
        items = [[it("Frühstück"), it(f"{n}x Abendessen")],                  # dinner is not the first item
                 [it(f"{n}x Abendessen"), it("Frühstücksbuffet")],
                 [it("Frühstück und Abendessen")]][style]
    elif board == "VP":
        items = [[it("Frühstück inkl. Lunchpaket"), it(f"{n}x Abendessen")],
                 [it("Vollpension")],
                 [it("Vollpension"), it("Getränkepaket zum Abendessen", 49)]][style]
    elif board == "FR":
        items = [it("Frühstück")]
        if style == 1:
            items.append(it(f"{n}x Abendessen", price_round(22 * n, 40, 300, r)))
        elif style == 2:
            items.append(it("Vollpension", price_round(17 * n, 40, 300, r)))
    elif board == "SV":
        items = [[], [it("Selbstverpflegung")], [it("Brötchenservice", price_round(4.5 * n, 15, 60, r))],
                 [it("Frühstückspaket", price_round(9 * n, 30, 90, r)),
                  it(f"{n - 1}x Abendessen im Partnerrestaurant", price_round(19 * n, 60, 200, r))]][style]
    else:
        raise ValueError(board)
    return items


BOARD_STYLES = {"4xAE": 2, "6xAE": 1, "HP": 3, "VP": 3, "FR": 3, "SV": 4}
BOARD_STYLE_FORCE = {"SOLVP": 0, "SKOGP": 0}   # no group 71 at all; "Frühstück inkl. Lunchpaket" first


def selections(g: dict, start: date, nights: int, r: random.Random) -> list[dict]:
    k, code = g["concept"], g["code"]
    sel = []

    def group(no: int, label: str, items: list[dict]) -> None:
        if items:
            sel.append({"group": no, "label": label, "items": items})

    it = lambda label, price=0.0: {"label": label, "price": float(price)}  # noqa: E731
    if not g["noskipass"]:
        days = max(1, g["skipass"] + nights - g["nights"])
        days = min(days, 6 if nights >= 7 else nights + 1)
        items = [it(f"{days}-Tage-Skipass {g['area']}")]
        if g["skipass_extra"]:
            items.append(it(g["skipass_extra"], g["skipass_extra_price"]))
        group(7, "Skipass", items)
    group(71, "Verpflegung", board_items(g["board"], nights, g["board_style"], r))
    prog, kurse, events = [], [], []
    if k == "so":
        prog = [it("Opening-Party im Sportclub")] if g["code"] != "SSVTO" else [it("Opening-Konzert am Berg", 35)]
        kurse = [it("Snowboardkurs (3 Tage)", 79)] if r.random() < 0.5 else []
        events = [it("Opening-Party")]
    elif k == "bw":
        prog = [it("Welcome-Abend"), it("Contest im Snowpark"), it("Abschlussparty")]
        kurse = [it("Snowboardkurs (4 Tage)", 89), it("Freestyle-Camp (3 Tage)", 119)]
    elif k == "camp":
        prog = [it("Hüttenabend"), it("Video-Session")]
        kurse = [it("Freestyle-Camp")] if code == "SCLXP" else [it("Skikurs in Kleingruppen"), it("Snowboardkurs")]
    elif k == "uni":
        prog = [it("Welcome-Party"), it("Pubquiz"), it("Schlittenabend", 19)]
        kurse = [it("Snowboardkurs (3 Tage)", 79)]
    elif k == "sil":
        prog = [it("Sekt um Mitternacht")]
        kurse = [it("Skikurs (3 Vormittage)", 99)]
    elif k == "ost":
        easter = start <= date(2027, 3, 28) < start + timedelta(nights)
        prog = [it("Ostereiersuche an der Talstation")] if easter else []
        kurse = [it("Skikurs (5 Vormittage)", 139)]
    elif k == "fam":
        prog = [it("Kinderbetreuung am Nachmittag")]
        kurse = [it("Kinderskikurs (5 Tage)", 149), it("Skikurs für Erwachsene (5 Vormittage)", 139)]
    elif k == "kurs":
        prog = [it("Abschlussrennen mit Siegerehrung")]
        kurse = [it("Skikurs (5 Vormittage à 4 Stunden)"), it("Snowboardkurs statt Skikurs")]
    elif k == "firm":
        prog = [it("Teamrennen mit Zeitnahme"), it("Hüttenabend mit Live-Musik", 39)]
    elif k == "we":
        prog = [it("Après-Ski-Tour mit der Reiseleitung")] if r.random() < 0.3 else []
    if start <= date(2026, 12, 31) < start + timedelta(nights):
        events.append(it("Silvesterparty"))
    if k in ("bw", "camp", "fam", "we", "kurs") and r.random() < 0.35:
        events.append(it("Fackelabfahrt"))
    group(86, "Programm", prog)
    group(87, "Kurse", kurse)
    group(89, "Events", events)
    if g["insurance"]:                                   # groups concierge ignores
        group(92, "Versicherung", [it("Reiserücktrittsversicherung", 29 if nights <= 3 else 49)])
    if g["rental"]:
        group(95, "Leihmaterial", [it(f"Ski oder Snowboard inkl. Schuhe ({max(1, nights - 1)} Tage)", 99)])
    return sel


def pickups_for(g: dict, start: date, r: random.Random) -> list[dict]:
    route = ROUTES["fel"] if g["city"] == "fel" else ROUTES[g["country"]]
    extra = EXTRA_STOPS["fel" if g["city"] == "fel" else g["country"]]
    cands = [(c, STOPS[c], off) for c, off in route] + [x for x in extra if x[0] in g["extra_stops"]]
    lo = 3
    hi = min(8, len(cands))
    if (g["code"], start) == DST_DATE:
        cands = [(c, STOPS[c], off) for c, off in route] + extra
        chosen = sorted(cands, key=lambda x: x[2])[-8:]
    else:
        chosen = sorted(r.sample(cands, r.randint(lo, hi)), key=lambda x: x[2])
    first = {"we": 19 * 60 + 30, "so": 17 * 60}.get(g["concept"], 16 * 60 + 30) + r.choice([0, 0, 0, -30, 30])
    dep = datetime(start.year, start.month, start.day) - timedelta(days=1)
    t0 = dep + timedelta(minutes=first) - timedelta(hours=1)              # local winter time -> UTC
    if t0 >= BERLIN_DST[0]:
        t0 -= timedelta(hours=1)
    out = []
    for i, (city, point, off) in enumerate(chosen):
        place = f"{city}, {point}"
        if place not in PICKUP_IDS:
            PICKUP_IDS[place] = 601 + len(PICKUP_IDS)
        price = g["pickup_prices"].get(city)
        leg = {"price": float(price)} if price else {}
        p = {"place": place, "busproId": PICKUP_IDS[place], "time": berlin(t0 + timedelta(minutes=off)),
             "outbound": leg}
        last = i == len(chosen) - 1
        if not (r.random() < (0.35 if last and city in ("Zürich", "Basel", "Bern", "Innsbruck", "Salzburg",
                                                         "Kufstein", "Winterthur", "Bregenz") else 0.03)):
            ret = dict(leg)
            if ret and r.random() < 0.15:
                ret = {"price": float(max(5, ret["price"] - 10))}
            p["return"] = ret
        out.append(p)
    return out


def hotel_rooms(kind: int, r: random.Random) -> list[str]:
    pool = ROOM_POOLS[kind]
    n = r.randint(2, min(6, len(pool)))
    chosen = set(r.sample(pool, n))
    return [c for c in pool if c in chosen]


def room_rows(codes: list[str], price0: float, nights: int, mode: str, baby: bool,
              ids: dict, r: random.Random) -> list[dict]:
    lo, hi = price_band(nights)
    rows = []
    for code in codes:
        label, mn, mx, factor = ROOM_TYPES[code]
        avail = r.choice([0, 0, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7, 8]) if mx < 9 else r.choice([0, 1, 1, 2])
        if mode == "soldout":
            if r.random() < 0.5:
                status = "Buchungsstop"
            else:
                avail, status = 0, r.choice(["Anfrage", "Anfrage", "frei"])
        elif r.random() < 0.06:
            status = "Buchungsstop"
        elif avail == 0:
            status = "Anfrage" if r.random() < 0.7 else "frei"
        elif avail <= 2:
            status = "wenige" if r.random() < 0.75 else "frei"
        else:
            status = "Anfrage" if r.random() < 0.05 else "frei"
        ids["room"] += 1
        rows.append({"code": code, "busproRoomId": ids["room"], "label": label, "status": status,
                     "available": avail, "minPax": mn, "maxPax": mx,
                     "price": price_round(price0 * factor * r.uniform(0.97, 1.03), lo, hi, r)})
    if baby:
        ids["room"] += 1
        rows.append({"code": "Baby", "busproRoomId": ids["room"], **{k: v for k, v in BABY.items() if k != "code"}})
    return rows


EXPORT_PRODUCTS: list[dict] = []
BUSPRO_HOTELS: dict[int, dict] = {}   # busproHotelId -> {"name", "matchcodes", "typo3"}
HOTEL_BUSPRO_ID: dict[str, int] = {}  # TYPO3 own code or BusPro-only first matchcode -> busproHotelId


def assign_buspro_hotel_ids() -> None:
    r = random.Random(f"{SEED}:export:hotel-ids")
    keys = list(H) + [m[0][0] for m in BUSPRO_ONLY]
    ids = r.sample([i for i in range(5101, 5400) if i not in (5102, 5140)], len(keys))
    for k, i in zip(keys, ids):
        HOTEL_BUSPRO_ID[k] = i
    HOTEL_BUSPRO_ID["LEDER"], HOTEL_BUSPRO_ID["VEDEL"] = 5102, 5140       # the contract's examples
    # keep them unique after pinning
    used = set()
    for k in keys:
        while HOTEL_BUSPRO_ID[k] in used:
            HOTEL_BUSPRO_ID[k] += 300
        used.add(HOTEL_BUSPRO_ID[k])


def buspro_name(code: str) -> str:
    if code in BUSPRO_NAMES:
        return BUSPRO_NAMES[code]
    h_ = H[code]
    short = h_["title"]
    for a, b in SHORTEN:
        short = short.replace(a, b)
    r = rng_for("export", "hotel-name", code)
    return r.choice(NAME_PATTERNS).format(CITY=h_["city"].upper(), city=T[h_["city"]]["title"], short=short)


def export_groups() -> list[dict]:
    """One entry per distinct product code (shared codes merged), plus BusPro's unmatched codes."""
    groups: dict[str, dict] = {}
    for p in P:
        if p["code"] in EXPORT_MISSING:
            continue
        g = groups.get(p["code"])
        if g is None:
            g = groups[p["code"]] = {
                "code": p["code"], "concept": p["concept"], "nights": p["nights"], "skipass": p["skipass"],
                "board": p["board"], "noskipass": p["noskipass"], "area": p["area"], "country": p["country"],
                "city": p["city"], "editorial": p["opt"].get("price"), "hotels": []}
        for hc in p["hotels"]:
            if hc not in g["hotels"]:
                g["hotels"].append(hc)
    for code, kk, hotels, nights in UNMATCHED_PRODUCTS:
        k = K[kk]
        groups[code] = {"code": code, "concept": kk, "nights": nights, "skipass": k["skipass"], "board": k["board"],
                        "noskipass": False, "area": T["zas"]["area"], "country": "at", "city": "zas",
                        "editorial": None, "hotels": hotels}
    return list(groups.values())


def build_export() -> None:
    assign_buspro_hotel_ids()
    only = {m[0][0]: m for m in BUSPRO_ONLY}
    alias_owner = {a: c for c, h_ in H.items() for a in h_["aliases"]}
    ids = {"room": 77000, "bus": 3100}
    used_date_ids: set[int] = set()
    used_product_ids: set[int] = set()
    for gi, g in enumerate(export_groups()):
        code = g["code"]
        r = rng_for("export", "product", code)
        g["skipass_extra"], g["skipass_extra_price"] = None, 0.0
        if r.random() < 0.25 and g["concept"] in ("bw", "uni", "kurs", "ost"):
            g["skipass_extra"] = "Skipass-Upgrade auf das ganze Skigebiet"
            g["skipass_extra_price"] = float(r.choice([39, 59, 79]))
        g["board_style"] = BOARD_STYLE_FORCE.get(code, r.randrange(BOARD_STYLES[g["board"]]))
        g["insurance"] = r.random() < 0.3
        g["rental"] = r.random() < 0.25
        country_key = "fel" if g["city"] == "fel" else g["country"]
        g["extra_stops"] = {c for c, _, _ in EXTRA_STOPS[country_key] if r.random() < 0.5}
        route = ROUTES[country_key]
        style = r.choice(["far", "far", "mixed", "free"])
        pp = {}
        for i, (city, _) in enumerate(route):
            if style == "far" and i < 2:
                pp[city] = [29, 19][i]
            elif style == "mixed" and r.random() < 0.5:
                pp[city] = r.choice([9, 15, 19, 25])
        for city, _, _ in EXTRA_STOPS[country_key]:
            if r.random() < 0.4:
                pp[city] = r.choice([15, 25])
        g["pickup_prices"] = pp
        pid = 48211 if code == "SSLMP" else r.randrange(48000, 49999)
        while pid in used_product_ids:
            pid += 1
        used_product_ids.add(pid)
        guide = ({"name": "Jonas Weber", "phone": "+49 170 5550123"} if code == "SSLMP" else
                 {"name": r.choice(GUIDES), "phone": f"+49 1{r.choice(['51', '52', '57', '60', '70', '71', '76'])} "
                                                     f"555{r.randrange(1000, 9999)}"})
        # the codes BusPro books each hotel under, and its room types per product
        hotel_plan = []
        for hc in g["hotels"]:
            if hc in only:
                hotel_plan.append((hc, hc, only[hc][3]))
            elif hc in H:
                hotel_plan.append((hc, hc, H[hc]["type"]))
            else:                                   # an alias named directly (unmatched products)
                hotel_plan.append((alias_owner[hc], hc, H[alias_owner[hc]]["type"]))
        extra_only = BUSPRO_ONLY_USE.get(code)
        if extra_only:
            hotel_plan.append((extra_only, extra_only, only[extra_only][3]))
        rooms_of = {own: hotel_rooms(kind, rng_for("export", "rooms", code, own)) for own, _, kind in hotel_plan}
        hotel_factor = {own: r.uniform(0.92, 1.1) for own, _, _ in hotel_plan}
        baby_of = {own: r.random() < 0.65 for own, _, _ in hotel_plan}
        base = base_price(code, g["concept"], g["nights"], g["editorial"], r)
        dates = []
        plan = [] if code in EXPORT_NO_DATES else plan_dates(code, g["concept"], g["nights"], r)
        for start, nights in plan:
            rd = rng_for("export", "date", code, start.isoformat())
            end = start + timedelta(days=nights)
            dcode = code + start.strftime("%d%m%y")
            did = 991201 if dcode == "SSLMP061226" else rd.randrange(990000, 999999)
            while did in used_date_ids:
                did += 1
            used_date_ids.add(did)
            # hotels of this date: most of the product's, at most 4
            chosen = [x for x in hotel_plan if rd.random() < 0.9] or [rd.choice(hotel_plan)]
            while len(chosen) > 4:
                chosen.pop(rd.randrange(len(chosen)))
            price0 = base * (nights / g["nights"]) ** 0.85 * season_factor(start)
            sold_out_date = (code, start) == SOLD_OUT_DATE
            hotels = []
            for own, book_code, kind in chosen:
                if own in H and book_code == own and H[own]["aliases"]:
                    aliases = [a for a in H[own]["aliases"] if a != "VTCHA"]   # VTCHA is Val Chavière's own
                    weekend_lederer = own == "LEDER" and g["concept"] == "we"
                    if aliases and rd.random() < (0.6 if weekend_lederer else 0.3):
                        book_code = rd.choice(aliases)
                u = rd.random()
                mode = "soldout" if sold_out_date or u < 0.05 else "normal"
                codes = [c for c in rooms_of[own] if len(rooms_of[own]) <= 2 or rd.random() < 0.9]
                if len(codes) < 2:
                    codes = rooms_of[own]
                hotels.append({"hotelCode": book_code, "busproHotelId": HOTEL_BUSPRO_ID[own],
                               "rooms": room_rows(codes, price0 * hotel_factor[own], nights, mode, baby_of[own],
                                                  ids, rd)})
            eigen = code in EIGENANREISE
            out_bookable = rd.random() >= 0.04
            buses = [
                {"direction": "outbound", "busproId": ids["bus"] + 1,
                 "label": "Busanreise (zubuchbar)" if eigen else "Hinfahrt im Reisebus",
                 "bookable": out_bookable, "price": EIGEN_BUS_PRICE if eigen else 0.0},
                {"direction": "return", "busproId": ids["bus"] + 2,
                 "label": "Busrückreise (zubuchbar)" if eigen else "Rückfahrt im Reisebus",
                 "bookable": out_bookable or rd.random() < 0.5, "price": EIGEN_BUS_PRICE if eigen else 0.0},
            ]
            ids["bus"] += 2
            dates.append({"dateCode": dcode, "busproId": did, "start": start.isoformat(), "end": end.isoformat(),
                          "hotels": hotels, "selections": selections(g, start, nights, rd), "buses": buses,
                          "pickups": pickups_for(g, start, rd)})
        EXPORT_PRODUCTS.append({"code": code, "busproId": pid, "guide": guide, "dates": dates})
    # hotel.xml: every busproHotelId the export uses
    used = {hh["busproHotelId"] for pr in EXPORT_PRODUCTS for d in pr["dates"] for hh in d["hotels"]}
    for own, hid in HOTEL_BUSPRO_ID.items():
        if hid not in used:
            continue
        if own in only:
            BUSPRO_HOTELS[hid] = {"name": only[own][1], "matchcodes": only[own][0], "typo3": False}
        else:
            BUSPRO_HOTELS[hid] = {"name": buspro_name(own), "matchcodes": [own] + H[own]["aliases"], "typo3": True}


def write_export() -> None:
    from xml.sax.saxutils import escape, quoteattr
    EXPORT.mkdir(exist_ok=True)
    BUSPRO.mkdir(exist_ok=True)
    dump = lambda x: json.dumps(x, ensure_ascii=False, separators=(", ", ": "))  # noqa: E731
    lines = ["{", f'  "generatedAt": {dump(EXPORT_GENERATED_AT)},', '  "products": [']
    for i, pr in enumerate(EXPORT_PRODUCTS):
        head = dump({k: v for k, v in pr.items() if k != "dates"})[:-1]
        tail = "," if i < len(EXPORT_PRODUCTS) - 1 else ""
        if not pr["dates"]:
            lines.append(f'    {head}, "dates": []}}{tail}')
            continue
        lines.append(f'    {head}, "dates": [')
        for j, d in enumerate(pr["dates"]):
            lines.append("      " + dump(d) + ("," if j < len(pr["dates"]) - 1 else ""))
        lines.append(f"    ]}}{tail}")
    lines += ["  ]", "}"]
    (EXPORT / "products.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    xml = ['<?xml version="1.0" encoding="UTF-8"?>', f"<hotels generated={quoteattr(HOTELXML_GENERATED)}>"]
    for hid in sorted(BUSPRO_HOTELS):
        bh = BUSPRO_HOTELS[hid]
        xml.append(f'  <hotel id="{hid}">')
        xml.append(f"    <name>{escape(bh['name'])}</name>")
        for m in bh["matchcodes"]:
            xml.append(f"    <matchcode>{escape(m)}</matchcode>")
        xml.append("  </hotel>")
    xml.append("</hotels>")
    (BUSPRO / "hotel.xml").write_text("\n".join(xml) + "\n", encoding="utf-8")


def export_facts() -> dict:
    """What the written export holds: the edge cases with their codes (printed; examples/ski/README.md lists them)."""
    import xml.etree.ElementTree as ET
    exp = json.loads((EXPORT / "products.json").read_text(encoding="utf-8"))
    root = ET.parse(BUSPRO / "hotel.xml").getroot()
    records = json.loads((FEED / "records.json").read_text(encoding="utf-8"))["records"]
    hotels = [rc for rc in records if rc["type"] == "hotel"]
    typo3_codes = {c for rc in hotels for c in rc["data"]["codes"]}
    xmlh = {int(x.get("id")): {"name": x.findtext("name"), "matchcodes": [m.text for m in x.findall("matchcode")]}
            for x in root.findall("hotel")}
    f: dict[str, list] = {k: [] for k in (
        "vtcha", "buspro_only", "stop_rooms", "sold_out_hotels", "sold_out_dates", "shared_beds", "big_rooms",
        "bus_priced", "bus_not_bookable", "unpriced_legs", "no_return", "no_skipass", "board_not_first",
        "other_groups", "past_dates", "dst_pickups", "summer_time", "aliases", "no_dates")}
    for pr in exp["products"]:
        if not pr["dates"]:
            f["no_dates"].append(pr["code"])
        for d in pr["dates"]:
            dc = d["dateCode"]
            if d["start"] < DATA_AS_OF.isoformat():
                f["past_dates"].append(dc)
            all_out = True
            for hh in d["hotels"]:
                hc = hh["hotelCode"]
                if hc == "VTCHA":
                    f["vtcha"].append(dc)
                if hc not in typo3_codes:
                    f["buspro_only"].append((hc, xmlh[hh["busproHotelId"]]["name"], dc))
                elif not any(rc["data"]["codes"][0] == hc for rc in hotels):
                    f["aliases"].append((hc, dc))
                rooms = [x for x in hh["rooms"] if x["code"] != "Baby"]
                bookable = [x for x in rooms if x["status"] != "Buchungsstop"]
                if len(bookable) < len(rooms):
                    f["stop_rooms"].append((dc, hc))
                if sum(x["available"] * x["maxPax"] for x in bookable) == 0:
                    f["sold_out_hotels"].append((dc, hc))
                else:
                    all_out = False
                for x in rooms:
                    lab = x["label"].lower()
                    if "bett im" in lab or "mit ander" in lab:
                        f["shared_beds"].append(x["label"])
                    if x["maxPax"] >= 9:
                        f["big_rooms"].append(x["label"])
            if all_out:
                f["sold_out_dates"].append(dc)
            out = next(b for b in d["buses"] if b["direction"] == "outbound")
            if out["price"] > 0:
                f["bus_priced"].append(pr["code"])
            if not out["bookable"]:
                f["bus_not_bookable"].append(dc)
            for pk in d["pickups"]:
                if "price" not in pk["outbound"] or ("return" in pk and "price" not in pk["return"]):
                    f["unpriced_legs"].append(dc)
                if "return" not in pk:
                    f["no_return"].append((dc, pk["place"]))
                if pk["time"].endswith("+02:00"):
                    f["summer_time"].append(dc)
            if len({pk["time"][-6:] for pk in d["pickups"]}) > 1:
                f["dst_pickups"].append(dc)
            groups = {s["group"]: s for s in d["selections"]}
            if 7 not in groups:
                f["no_skipass"].append(pr["code"])
            if 71 in groups:
                labels = [i["label"] for i in groups[71]["items"]]
                if "Abendessen" not in labels[0] and any("Abendessen" in x for x in labels[1:]):
                    f["board_not_first"].append(pr["code"])
            f["other_groups"] += [(pr["code"], g) for g in groups if g not in (7, 71, 86, 87, 89)]
    for k in f:
        seen, uniq = set(), []
        for x in f[k]:
            if x not in seen:
                seen.add(x)
                uniq.append(x)
        f[k] = uniq
    return f


def validate_export() -> list[str]:
    import xml.etree.ElementTree as ET
    errors: list[str] = []
    exp = json.loads((EXPORT / "products.json").read_text(encoding="utf-8"))
    try:
        root = ET.parse(BUSPRO / "hotel.xml").getroot()
    except ET.ParseError as e:
        return [f"hotel.xml: {e}"]
    records = json.loads((FEED / "records.json").read_text(encoding="utf-8"))["records"]
    hotels = [rc for rc in records if rc["type"] == "hotel"]
    owner = {rc["data"]["codes"][0]: rc["uid"] for rc in hotels}
    for rc in hotels:                        # an alias resolves to its hotel unless it is another's own code
        for a in rc["data"]["codes"][1:]:
            owner.setdefault(a, rc["uid"])
    typo3_products = {rc["data"]["code"] for rc in records if rc["type"] == "product"}
    if root.tag != "hotels" or root.get("generated") != HOTELXML_GENERATED:
        errors.append("hotel.xml: root element or generated attribute")
    xmlh: dict[int, dict] = {}
    for x in root.findall("hotel"):
        hid = int(x.get("id"))
        if hid in xmlh:
            errors.append(f"hotel.xml: id {hid} twice")
        mcs = [m.text for m in x.findall("matchcode")]
        if not x.findtext("name") or not mcs:
            errors.append(f"hotel.xml: hotel {hid} without name or matchcode")
        xmlh[hid] = {"name": x.findtext("name"), "matchcodes": mcs,
                     "buspro_only": not any(m in owner for m in mcs)}
    if exp.get("generatedAt") != EXPORT_GENERATED_AT or set(exp) != {"generatedAt", "products"}:
        errors.append("export: generatedAt or top-level keys")
    codes = [pr["code"] for pr in exp["products"]]
    if len(codes) != len(set(codes)):
        errors.append("export: a product code twice")
    date_codes: set[str] = set()
    ids: dict[str, set] = {"product": set(), "date": set(), "bus": set(), "room": set()}
    hotel_uid_of: dict[int, set] = {}
    used_hids: set[int] = set()
    money = lambda v: isinstance(v, float) and v >= 0 and (v * 2) == int(v * 2)  # noqa: E731

    def label_ok(where: str, label: str) -> None:
        if not isinstance(label, str) or not label:
            errors.append(f"{where}: empty label")
        elif "halbpension" in label.lower():
            errors.append(f"{where}: label {label!r} says Halbpension")

    def unique(kind: str, v, where: str) -> None:
        if not isinstance(v, int) or isinstance(v, bool):
            errors.append(f"{where}: {kind} busproId {v!r} is not an integer")
        elif v in ids[kind]:
            errors.append(f"{where}: {kind} busproId {v} twice")
        ids[kind].add(v)

    for pr in exp["products"]:
        c = pr["code"]
        if list(pr) != ["code", "busproId", "guide", "dates"]:
            errors.append(f"{c}: keys {list(pr)}")
        if not re.fullmatch(r"[A-Z]{5}", c):
            errors.append(f"{c}: not a product code")
        unique("product", pr["busproId"], c)
        gd = pr["guide"]
        if not gd.get("name") or not re.fullmatch(r"\+49 1[5-7]\d \d{7}", gd.get("phone", "")):
            errors.append(f"{c}: guide {gd}")
        if not pr["dates"] and c not in EXPORT_NO_DATES:
            errors.append(f"{c}: no dates")
        if pr["dates"] and not 4 <= len(pr["dates"]) <= 12:
            errors.append(f"{c}: {len(pr['dates'])} dates")
        for d in pr["dates"]:
            dc = d["dateCode"]
            w = dc
            start, end = date.fromisoformat(d["start"]), date.fromisoformat(d["end"])
            if dc != c + start.strftime("%d%m%y"):
                errors.append(f"{w}: date code is not {c} + DDMMYY of {d['start']}")
            if dc in date_codes:
                errors.append(f"{w}: date code twice")
            date_codes.add(dc)
            unique("date", d["busproId"], w)
            nights = (end - start).days
            if not 2 <= nights <= 7:
                errors.append(f"{w}: {nights} nights (end must be 2–7 days after start)")
            if not date(2026, 11, 1) <= start <= date(2027, 4, 30):
                errors.append(f"{w}: start outside the season")
            if not 1 <= len(d["hotels"]) <= 4:
                errors.append(f"{w}: {len(d['hotels'])} hotels")
            if len({hh["busproHotelId"] for hh in d["hotels"]}) != len(d["hotels"]):
                errors.append(f"{w}: a hotel twice")
            lo, hi = price_band(nights)
            for hh in d["hotels"]:
                hc, hid = hh["hotelCode"], hh["busproHotelId"]
                wh = f"{w}/{hc}"
                used_hids.add(hid)
                if hid not in xmlh:
                    errors.append(f"{wh}: busproHotelId {hid} not in hotel.xml")
                    continue
                if hc not in xmlh[hid]["matchcodes"]:
                    errors.append(f"{wh}: not a matchcode of BusPro hotel {hid}")
                if hc in owner:
                    hotel_uid_of.setdefault(hid, set()).add(owner[hc])
                elif not xmlh[hid]["buspro_only"]:
                    errors.append(f"{wh}: neither a TYPO3 hotel code nor a BusPro-only hotel")
                rooms = [x for x in hh["rooms"] if x["code"] != "Baby"]
                if not 2 <= len(rooms) <= 6:
                    errors.append(f"{wh}: {len(rooms)} rooms")
                if len({x["code"] for x in hh["rooms"]}) != len(hh["rooms"]):
                    errors.append(f"{wh}: a room code twice")
                for x in hh["rooms"]:
                    wr = f"{wh}/{x['code']}"
                    if list(x) != ["code", "busproRoomId", "label", "status", "available", "minPax", "maxPax", "price"]:
                        errors.append(f"{wr}: keys {list(x)}")
                    unique("room", x["busproRoomId"], wr)
                    label_ok(wr, x["label"])
                    if x["status"] not in ("frei", "wenige", "Anfrage", "Buchungsstop"):
                        errors.append(f"{wr}: status {x['status']}")
                    if not money(x["price"]):
                        errors.append(f"{wr}: price {x['price']!r}")
                    if x["code"] == "Baby":
                        if (x["maxPax"], x["price"], x["status"]) != (1, 0.0, "frei") or x["available"] < 20:
                            errors.append(f"{wr}: not an infant row")
                        continue
                    if not (isinstance(x["available"], int) and 0 <= x["available"] <= 8):
                        errors.append(f"{wr}: available {x['available']}")
                    if not 1 <= x["minPax"] <= x["maxPax"] <= 12:
                        errors.append(f"{wr}: minPax {x['minPax']} maxPax {x['maxPax']}")
                    lab = x["label"].lower()
                    if ("bett im" in lab or "mit ander" in lab) != (x["maxPax"] == 1 and x["code"].startswith("MB")
                                                                     or x["code"] == "LAGER"):
                        errors.append(f"{wr}: shared-bed label {x['label']!r} and room do not agree")
                    if not lo <= x["price"] <= hi:
                        errors.append(f"{wr}: price {x['price']} outside {lo}–{hi} for {nights} nights")
            for s in d["selections"]:
                if not isinstance(s["group"], int) or not s["items"]:
                    errors.append(f"{w}: selection {s}")
                label_ok(f"{w}/group {s['group']}", s["label"])
                for i in s["items"]:
                    label_ok(f"{w}/group {s['group']}", i["label"])
                    if not money(i["price"]):
                        errors.append(f"{w}: item price {i}")
            if [b["direction"] for b in d["buses"]] != ["outbound", "return"]:
                errors.append(f"{w}: buses {[b['direction'] for b in d['buses']]}")
            for b in d["buses"]:
                unique("bus", b["busproId"], w)
                label_ok(f"{w}/bus", b["label"])
                if not isinstance(b["bookable"], bool) or not money(b["price"]):
                    errors.append(f"{w}: bus {b}")
            if not 3 <= len(d["pickups"]) <= 8:
                errors.append(f"{w}: {len(d['pickups'])} pickups")
            eve = datetime(start.year, start.month, start.day) - timedelta(hours=10)      # 14:00 the day before
            for pk in d["pickups"]:
                wp = f"{w}/{pk.get('place')}"
                if set(pk) - {"place", "busproId", "time", "outbound", "return"} or "outbound" not in pk:
                    errors.append(f"{wp}: keys {sorted(pk)}")
                if not isinstance(pk["busproId"], int) or not pk.get("place"):
                    errors.append(f"{wp}: place or busproId")
                t = pk["time"]
                if not RFC3339.match(t):
                    errors.append(f"{wp}: time {t} is not RFC 3339")
                    continue
                local = datetime.fromisoformat(t[:19])
                utc = local - timedelta(hours=int(t[-5:-3]))
                if berlin(utc) != t:
                    errors.append(f"{wp}: {t} has the wrong Berlin offset")
                if not eve <= local <= eve + timedelta(hours=16):
                    errors.append(f"{wp}: {t} is not the evening or night before {d['start']}")
                for leg in ("outbound", "return"):
                    x = pk.get(leg)
                    bad_price = isinstance(x, dict) and "price" in x and not (money(x["price"]) and x["price"] > 0)
                    if leg in pk and (not isinstance(pk[leg], dict) or set(pk[leg]) - {"price"} or bad_price):
                        errors.append(f"{wp}: {leg} leg {pk[leg]} is not {{}} or {{\"price\": > 0}}")
    for hid, uids in hotel_uid_of.items():
        if len(uids) != 1:
            errors.append(f"busproHotelId {hid} stands for several TYPO3 hotels {sorted(uids)}")
    if set(xmlh) - used_hids:
        errors.append(f"hotel.xml ids not used by the export: {sorted(set(xmlh) - used_hids)}")
    # the documented edge cases are there
    f = export_facts()
    in_export = set(codes)
    if typo3_products - in_export != EXPORT_MISSING:
        errors.append(f"TYPO3 codes without export entry: {sorted(typo3_products - in_export)}")
    if sorted(in_export - typo3_products) != sorted(u[0] for u in UNMATCHED_PRODUCTS):
        errors.append(f"unmatched export codes: {sorted(in_export - typo3_products)}")
    need = {"vtcha": 1, "buspro_only": 3, "stop_rooms": 5, "sold_out_hotels": 5, "sold_out_dates": 1,
            "shared_beds": 2, "big_rooms": 2, "bus_priced": 1, "bus_not_bookable": 2, "unpriced_legs": 5,
            "no_return": 5, "no_skipass": 2, "board_not_first": 2, "other_groups": 1, "past_dates": 3,
            "dst_pickups": 1, "aliases": 5, "no_dates": 1}
    for k, n in need.items():
        got = len({x[0] if isinstance(x, tuple) and k == "buspro_only" else x for x in f[k]})
        if got < n:
            errors.append(f"edge case {k}: {got} < {n}")
    for c in ("SGGER", "SZTDA", "SBWSF", "SSLMP", "SWZSP", "SSSOP"):
        if not any(pr["code"] == c and pr["dates"] for pr in exp["products"]):
            errors.append(f"{c}: no export dates")
    if "SSLMP061226" not in date_codes:
        errors.append("the contract's date SSLMP061226 is missing")
    if len(codes) < 40 or len(used_hids) < 60:
        errors.append(f"only {len(codes)} products / {len(used_hids)} hotels")
    return errors


def summary_export() -> None:
    exp = json.loads((EXPORT / "products.json").read_text(encoding="utf-8"))
    dates = [d for pr in exp["products"] for d in pr["dates"]]
    rows = [hh for d in dates for hh in d["hotels"]]
    rooms = [x for hh in rows for x in hh["rooms"] if x["code"] != "Baby"]
    f = export_facts()
    only = sorted({x[0] for x in f["buspro_only"]})
    print(f"export: {len(exp['products'])} products, {len(dates)} dates, {len(rows)} date×hotel rows, "
          f"{len(rooms)} room rows, {len({hh['busproHotelId'] for hh in rows})} hotels "
          f"({len(only)} BusPro-only: {', '.join(only)}), {len(PICKUP_IDS)} pickup places")
    for name in ("export/products.json", "buspro/hotel.xml"):
        print(f"  {name}: {(HERE / name).stat().st_size} bytes")
    short = lambda xs, n=6: ", ".join(map(str, xs[:n])) + (f" … ({len(xs)})" if len(xs) > n else "")  # noqa: E731
    print("  edge cases:")
    print(f"    VTCHA as hotelCode: {short(f['vtcha'])}")
    print(f"    alias codes booked: {short(sorted({a for a, _ in f['aliases']}), 20)}")
    print(f"    BusPro-only hotels: {short(sorted({(a, b) for a, b, _ in f['buspro_only']}), 10)}")
    print(f"    Buchungsstop rooms in {len(f['stop_rooms'])} date×hotel rows; sold-out rows: "
          f"{short([a + '/' + b for a, b in f['sold_out_hotels']], 10)}")
    print(f"    dates sold out at every hotel: {short(f['sold_out_dates'])}")
    print(f"    shared-bed labels: {short(sorted(set(f['shared_beds'])))}; "
          f"9+ rooms: {short(sorted(set(f['big_rooms'])))}")
    print(f"    priced outbound bus: {short(f['bus_priced'])}; "
          f"outbound not bookable: {short(f['bus_not_bookable'], 10)}")
    print(f"    dates with unpriced legs: {len(f['unpriced_legs'])}; pickups without return: "
          f"{short([a + ' ' + b for a, b in f['no_return']], 4)}")
    print(f"    no group 7: {short(f['no_skipass'])}; dinner not the first 71 item: {short(f['board_not_first'], 12)}")
    print(f"    other selection groups: {short(f['other_groups'], 4)}")
    print(f"    past dates: {short(f['past_dates'], 10)}; dates: []: {short(f['no_dates'])}")
    print(f"    dates with summer-time pickups: {len(f['summer_time'])}; pickups across the switch: "
          f"{short(f['dst_pickups'])}")


# --------------------------------------------------------------------------------------------
# Validation (the contract's rules, plus what the sample data promises) and summary
# --------------------------------------------------------------------------------------------

from html.parser import HTMLParser  # noqa: E402

DROPPED = {"script", "style", "nav", "header", "footer", "aside", "form", "head"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class TextOf(HTMLParser):
    """Roughly what concierge keeps of a page: the body without chrome, scripts, forms and cookie banners."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        cls = dict(attrs).get("class") or ""
        drop = tag in DROPPED or "cookie" in cls
        self.stack.append((tag, drop))

    def handle_endtag(self, tag):
        while self.stack:
            t, _ = self.stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        if not any(d for _, d in self.stack) and data.strip():
            self.text.append(data.strip())


def text_of(doc: str) -> str:
    parser = TextOf()
    parser.feed(doc)
    return " ".join(parser.text)


RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
RECORD_TYPES = {"product", "hotel", "city", "region", "country", "concept"}


def validate() -> list[str]:
    errors: list[str] = []
    manifest = json.loads((FEED / "manifest.json").read_text(encoding="utf-8"))
    records = json.loads((FEED / "records.json").read_text(encoding="utf-8"))["records"]
    sites = {s["site"]: s["hosts"] for s in manifest["sites"]}
    if not manifest["sites"] or not manifest["items"]:
        errors.append("empty sites or items")
    keys = set()
    by_key = {}
    for it in manifest["items"]:
        k = (it.get("type"), it.get("uid"), it.get("language"))
        for f in ("type", "uid", "language", "modified"):
            if f not in it:
                errors.append(f"{k}: no {f}")
        if it["type"] not in RECORD_TYPES | {"page", "blog"}:
            errors.append(f"{k}: unknown type")
        if not isinstance(it["uid"], int) or it["uid"] <= 0:
            errors.append(f"{k}: bad uid")
        if not RFC3339.match(it["modified"]):
            errors.append(f"{k}: modified is not RFC 3339")
        off = it["modified"][-6:]
        day = it["modified"][:10]
        if off != ("+02:00" if day < "2026-10-25" else "+01:00"):
            errors.append(f"{k}: offset {off} does not fit {day}")
        if it["modified"] > "2026-11-30T21":
            errors.append(f"{k}: modified after generatedAt")
        if k in keys:
            errors.append(f"{k}: duplicate")
        keys.add(k)
        by_key[(it["type"], it["uid"])] = it
        if ("site" in it) != ("url" in it):
            errors.append(f"{k}: site without url or url without site")
        if "site" in it and it["site"] not in sites:
            errors.append(f"{k}: unknown site")
        if "url" in it and urlsplit(it["url"]).netloc not in sites[it["site"]]:
            errors.append(f"{k}: url not on a host of its site")
        if it["type"] in ("page", "blog") and "contentUrl" not in it:
            errors.append(f"{k}: page without contentUrl")
        if "contentUrl" in it:
            cu = it["contentUrl"]
            if not it.get("site") or urlsplit(cu).netloc not in sites[it["site"]]:
                errors.append(f"{k}: contentUrl {cu} not on a host of its site")
            if not cu.endswith(CONTENT_TYPE_QUERY):
                errors.append(f"{k}: contentUrl without {CONTENT_TYPE_QUERY}")
            if not page_file(cu).is_file():
                errors.append(f"{k}: no page file for {cu}")
        if not isinstance(it.get("breadcrumb"), list) or not it.get("title"):
            errors.append(f"{k}: title/breadcrumb missing")
    for it in manifest["items"]:
        if "detailOf" in it:
            d = it["detailOf"]
            if (d["type"], d["uid"]) not in by_key or d["type"] not in RECORD_TYPES:
                errors.append(f"{it['type']} {it['uid']}: detailOf {d} does not exist")
            if it["type"] != "page":
                errors.append(f"{it['type']} {it['uid']}: detailOf on a non-page")
    # urls: unique, except a detail page sharing its record's url
    seen: dict[str, tuple] = {}
    for it in manifest["items"]:
        u = it.get("url")
        if not u:
            continue
        if u in seen:
            a, b = by_key[seen[u]], it
            pair = {(a["type"], a["uid"]), (b["type"], b["uid"])}
            ok = any("detailOf" in x and (x["detailOf"]["type"], x["detailOf"]["uid"]) in pair for x in (a, b))
            if not ok:
                errors.append(f"url {u} used by {seen[u]} and {(it['type'], it['uid'])}")
        seen[u] = (it["type"], it["uid"])
    rec_keys = {}
    for rc in records:
        k = (rc["type"], rc["uid"], rc["language"])
        if k in rec_keys:
            errors.append(f"record {k} twice")
        rec_keys[k] = rc
    for k in keys:
        if k[0] in RECORD_TYPES and k not in rec_keys:
            errors.append(f"{k}: no record")
    for k in rec_keys:
        if k not in keys:
            errors.append(f"record {k} not in the manifest")

    def resolves(r_, types, where):
        if not r_ or r_.get("type") not in types or (r_["type"], r_["uid"]) not in by_key:
            errors.append(f"{where}: ref {r_} does not resolve")

    hotel_types = set()
    for (t_, uid, _), rc in rec_keys.items():
        d = rc["data"]
        w = f"{t_} {uid}"
        if d.get("title") != by_key[(t_, uid)]["title"]:
            errors.append(f"{w}: record title differs from the manifest's")
        if t_ == "product":
            if not re.fullmatch(r"[A-Z]{5}", d["code"]):
                errors.append(f"{w}: code {d['code']}")
            for x in d["destinations"]:
                resolves(x, {"city", "region", "country"}, w)
            resolves(d["concept"], {"concept"}, w)
            if not 1 <= len(d["hotels"]) <= 4:
                errors.append(f"{w}: {len(d['hotels'])} hotels")
            for x in d["hotels"]:
                resolves(x, {"hotel"}, w)
            if not 2 <= len(d["faqs"]) <= 5:
                errors.append(f"{w}: {len(d['faqs'])} faqs")
            words = len(text_of(d["description"]).split())
            if not 150 <= words <= 400:
                errors.append(f"{w}: description has {words} words")
        elif t_ == "hotel":
            hotel_types.add(d["type"])
            if not all(re.fullmatch(r"[A-Z0-9]{5}", c) for c in d["codes"]) or len(d["codes"]) > 3:
                errors.append(f"{w}: codes {d['codes']}")
            resolves(d["city"], {"city"}, w)
        elif t_ == "city":
            resolves(d.get("parent"), {"region"}, w)
        elif t_ == "region":
            resolves(d.get("parent"), {"country"}, w)
        elif t_ == "country" and "parent" in d:
            errors.append(f"{w}: country with parent")
    if hotel_types != {1, 2, 3, 4, 5}:
        errors.append(f"hotel types {sorted(hotel_types)}")
    # every page file belongs to a contentUrl
    files = {p for p in (FEED / "pages").rglob("index.html")}
    wanted = {page_file(it["contentUrl"]) for it in manifest["items"] if "contentUrl" in it}
    if files != wanted:
        errors.append(f"page files without item: {sorted(map(str, files - wanted))[:5]}")
    return errors


def summary() -> None:
    manifest = json.loads((FEED / "manifest.json").read_text(encoding="utf-8"))
    items = manifest["items"]
    print(f"items: {len(items)}")
    by_type: dict[str, int] = {}
    by_site: dict[str, int] = {}
    for it in items:
        by_type[it["type"]] = by_type.get(it["type"], 0) + 1
        by_site[it.get("site", "(none)")] = by_site.get(it.get("site", "(none)"), 0) + 1
    print("  per type: " + ", ".join(f"{t} {by_type.get(t, 0)}" for t in TYPE_ORDER))
    print("  per site: " + ", ".join(f"{s} {n}" for s, n in sorted(by_site.items())))
    words, empty = [], []
    for it in items:
        if "contentUrl" in it:
            n = len(text_of(page_file(it["contentUrl"]).read_text(encoding="utf-8")).split())
            (words.append(n) if n else empty.append(f"{it['type']} {it['uid']}"))
    print(f"  pages with text: {len(words)} (words per page min {min(words)}, median "
          f"{sorted(words)[len(words) // 2]}, max {max(words)}); converting to no text: {', '.join(empty)}")
    files = [p for p in FEED.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(f"files: {len(files)}, bytes: {size} ({size / 1024 / 1024:.2f} MiB)")


def main() -> int:
    build_geo()
    build_concepts()
    build_products()
    build_hotels()
    build_hotel_records()
    build_product_records()
    build_geo_concept_records()
    assemble_products()   # first: destination and hotel pages link to the products
    assemble_geo()
    assemble_concepts()
    assemble_hotels()
    assemble_info_pages()
    assemble_pages()
    assemble_blogs()
    write_output()
    build_export()
    write_export()
    errors = validate() + validate_export()
    summary()
    summary_export()
    if errors:
        print(f"INVALID: {len(errors)} problem(s)", file=sys.stderr)
        for e in errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("valid: manifest, records, refs, detailOf, contentUrl hosts and page files check out; the export and "
          "hotel.xml agree with the feed and the contract")
    return 0


if __name__ == "__main__":
    sys.exit(main())
