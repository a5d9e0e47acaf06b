#!/usr/bin/env python3
"""Writes the demo's embedded data: a small synthetic English corpus and two
fine-tuning sets derived from it.

    python demo/make_data.py                  # (re)writes demo/data/
    python demo/make_data.py --check          # exit 1 if demo/data/ differs
    python demo/make_data.py --output_dir D   # writes (or with --check, compares) D

Everything is generated from the templates and word lists in demo/words/*.json
(described in demo/README.md) with a fixed seed (standard library only, no
downloaded text), so the output is byte-identical on every run (checked with
Python 3.10 to 3.13) whatever the hash seed.

Files (relative to the output folder):

* corpus.txt: pre-training text in google-research/bert's format, one
  sentence per line and a blank line between documents. Each document
  describes one fictional subject of one of five kinds (town, person, animal,
  ship, invention) in order: introduction, history, description, today.
* classify/{train,dev,test}.tsv: `sentence<TAB>label` with a header row; the
  label is the kind of document a corpus sentence comes from. Dev and test
  sentences come from documents that train does not use.
* squad/{train,dev}.json: SQuAD v1.1 questions on paragraphs of corpus
  documents, asked about the facts the generator put in them. Dev contexts
  come from documents that train does not use.
"""

import argparse
import json
import os
import random
import re
import sys

SEED = 1874
KINDS = ("town", "person", "animal", "ship", "invention")
DOCS_PER_KIND = 80
# Documents of each kind used by each derived set (the rest are corpus-only).
SPLIT_DOCS = {"cls_train": 30, "cls_dev": 8, "cls_test": 8, "squad_train": 16, "squad_dev": 5}
CLS_SIZES = {"train": 120, "dev": 30, "test": 30}  # sentences per kind
SQUAD_SIZES = {"train": 80, "dev": 20}  # questions per kind
MIN_WORDS, MAX_WORDS = 8, 30
MAX_SENTENCES = 30
# The section of each plan that long documents lengthen with their kind's extras.
EXTRA_SECTION = {
    "town": "description",
    "person": "description",
    "animal": "description",
    "ship": "history",
    "invention": "description",
}
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUTPUT = os.path.join(HERE, "data")
WORDS_DIR = os.path.join(HERE, "words")


def read_words(name):
    with open(os.path.join(WORDS_DIR, name + ".json"), encoding="utf-8") as f:
        return json.load(f)


# names.json: syllables and given names; common.json: what every kind uses;
# one file per kind: its word lists, plan, extras and questions.
NAMES = read_words("names")
COMMON = read_words("common")
WORDS = {kind: read_words(kind) for kind in KINDS}
# A template field {x} that is not a fact of the document is drawn from
# FIELDS["x"] at each use.
FIELDS = COMMON["fields"]


def pick_pair(rng, pairs):
    """A (key, value) of a JSON object of pairs."""
    return rng.choice(list(pairs.items()))


def cap(word):
    return word[:1].upper() + word[1:]


# ---------------------------------------------------------------------------
# Names built from syllables.


def syllable_word(rng, parts=2):
    word = rng.choice(NAMES["onsets"])
    for _ in range(parts - 2):
        word += rng.choice(NAMES["middles"])
    return word + rng.choice(NAMES["endings"])


class Names:
    """Unique fictional names of each sort."""

    def __init__(self, rng):
        self.rng = rng
        self.used = set()

    def _unique(self, make):
        for _ in range(1000):
            name = make()
            if name not in self.used:
                self.used.add(name)
                return name
        raise RuntimeError("ran out of names")

    def town(self):
        rng = self.rng

        def make():
            base = cap(syllable_word(rng, 2))
            roll = rng.random()
            if roll < 0.45:
                return cap(
                    rng.choice(NAMES["onsets"])
                    + rng.choice("aeiou") * rng.randint(0, 1)
                    + rng.choice(NAMES["town_suffixes"])
                )
            if roll < 0.65:
                return base + " " + rng.choice(NAMES["town_seconds"])
            if roll < 0.8:
                return rng.choice(NAMES["town_prefixes"]) + " " + base
            return cap(syllable_word(rng, 3))

        return self._unique(make)

    def word(self, parts=2):
        return self._unique(lambda: cap(syllable_word(self.rng, parts)))

    def given(self, female):
        rng = self.rng
        if rng.random() < 0.7:
            return rng.choice(NAMES["female_names" if female else "male_names"])
        stem = rng.choice(NAMES["onsets"]) + rng.choice(NAMES["middles"])
        endings = NAMES["female_given_endings" if female else "male_given_endings"]
        return cap(stem + rng.choice(endings))

    def surname(self):
        rng = self.rng
        return self._unique(
            lambda: cap(
                syllable_word(rng, rng.choice([2, 2, 3])) + rng.choice(NAMES["surname_suffixes"])
            )
        )

    def person(self, female=None):
        if female is None:
            female = self.rng.random() < 0.5
        return self.given(female) + " " + self.surname()

    def genus(self):
        rng = self.rng
        return self._unique(
            lambda: cap(
                rng.choice(NAMES["onsets"])
                + rng.choice(NAMES["middles"])
                + rng.choice(NAMES["latin_endings"])
            )
        )


# ---------------------------------------------------------------------------
# Template rendering with recorded spans.

FIELD = re.compile(r"\{(\w+)\}")


class Choice(tuple):
    """A template value drawn anew at each use."""


class Sentence:
    def __init__(self, text, spans, template, generic):
        self.text = text
        self.spans = spans  # field -> (start, end) of its first use
        self.template = template
        self.generic = generic  # kind not decidable from the sentence: not classified


def render(template, values, rng):
    pieces, spans, pos, offset = [], {}, 0, 0
    for match in FIELD.finditer(template):
        literal = template[pos : match.start()]
        pieces.append(literal)
        offset += len(literal)
        name = match.group(1)
        if name in values:
            value = values[name]
            if isinstance(value, Choice):
                value = rng.choice(value)
        elif name in FIELDS:
            value = rng.choice(FIELDS[name])
        else:
            raise KeyError(f"no value for {{{name}}} in {template!r}")
        value = str(value)
        if value[:1] in "aeiouAEIOU" and re.search(r"(^|\s)[Aa] $", literal):
            pieces[-1] = literal[:-1] + "n "
            offset += 1
        if name not in spans:
            spans[name] = (offset, offset + len(value))
        pieces.append(value)
        offset += len(value)
        pos = match.end()
    pieces.append(template[pos:])
    text = "".join(pieces)
    return cap(text), spans


# ---------------------------------------------------------------------------
# Document plans. A plan maps section names to lists of slots; a slot
# {"chance": p, "templates": [...]} gives one sentence with probability p, a
# slot {"pool": [low, high], "templates": [...]} gives low..high distinct
# sentences. A template starting with "~" reads like another kind's sentence
# out of context (an inventor's life reads like a person's): it stays out of
# the classification set.


def pick_section(rng, section, values, short=False, generic_rate=0.1):
    """The rendered sentences of one section. Short documents keep the
    required slots and few of the optional ones."""
    out = []
    for slot in section:
        templates = slot["templates"]
        if "pool" in slot:
            low, high = slot["pool"]
            count = rng.randint(low, min(high, 1) if short else high)
            chosen = rng.sample(templates, min(len(templates), count))
            chosen.sort(key=templates.index)
            out.extend((t, False) for t in chosen)
        else:
            probability = slot["chance"]
            if probability < 1 and short:
                probability *= 0.3
            if rng.random() < probability:
                out.append((rng.choice(templates), False))
    if out and not short and rng.random() < generic_rate:
        out.insert(rng.randint(1, len(out)), (rng.choice(COMMON["generic"]), True))
    return [render_checked(rng, t, values, generic) for t, generic in out]


def render_checked(rng, template, values, generic):
    ambiguous = template.startswith("~")
    for _ in range(10):  # drawn values may make a sentence too long: draw again
        text, spans = render(template.lstrip("~"), values, rng)
        n = len(text.split())
        if MIN_WORDS <= n <= MAX_WORDS:
            return Sentence(text, spans, template, generic or ambiguous)
    raise ValueError(f"{n} words: {text!r}")


def year_between(rng, low, high):
    return rng.randint(low, high)


def thousands(n):
    return f"{n:,}"


# ---------------------------------------------------------------------------
# The facts of each kind of document: the values of its templates' fields.


def town_values(rng, names, ctx):
    town = WORDS["town"]
    name = ctx["name"]
    job, deed = pick_pair(rng, town["founder_jobs"])
    founder_female = job == "abbess" or (job not in ("monk", "knight") and rng.random() < 0.25)
    founder = names.person(founder_female)
    if founder_female:
        deed = deed.replace(" his ", " her ")
    industry, goods = pick_pair(rng, town["industries"])
    nick_reason, nickname = pick_pair(rng, town["nick_reasons"])
    founded = year_between(rng, 1050, 1600)
    vegetation = rng.choice(FIELDS["vegetation"])
    km = rng.randint(6, 95)
    return {
        "Name": name,
        "ref": name,
        "base_year": founded,
        "size": rng.choice(town["sizes"]),
        "town_type": rng.choice(town["types"]),
        "region": ctx["region"],
        "bank": rng.choice(town["banks"]),
        "river": ctx["river"],
        "distance": f"{km} kilometres",
        "city": ctx["city"],
        "nick_reason": nick_reason,
        "nickname": nickname,
        "founded_year": founded,
        "founder": founder,
        "founder_short": founder.split()[-1],
        "founder_job": job,
        "founder_deed": deed,
        "origin": rng.choice(town["origins"]),
        "industry": industry,
        "goods": goods,
        "far_city": ctx["far_city"],
        "disaster": rng.choice(FIELDS["disaster"]),
        "disaster_year": year_between(rng, founded + 80, 1890),
        "railway_year": year_between(rng, 1840, 1905),
        "decline_year": year_between(rng, 1860, 1960),
        "decline_cause": rng.choice(town["decline_causes"]),
        "landmark": rng.choice(town["landmarks"]),
        "landmark_year": year_between(rng, founded + 20, 1880),
        "arches": rng.choice(["two", "three", "five", "seven", "nine"]),
        "distance_small": f"{rng.randint(5, 25)} kilometres",
        "vegetation": vegetation,
        "vegetation2": rng.choice([v for v in FIELDS["vegetation"] if v != vegetation]),
        "population": thousands(rng.randint(8, 190) * 100),
        "festival": ctx["town_short"] + " " + rng.choice(town["festival_words"]),
        "festival_month": rng.choice(FIELDS["month"]),
        "festival_act": rng.choice(town["festival_acts"]),
        "minutes": rng.choice([20, 25, 30, 35, 40, 45, 50, 55, 70, 90]),
    }


def person_values(rng, names, ctx):
    person = WORDS["person"]
    female = ctx["female"]
    name = ctx["name"]
    given, surname = name.split(" ", 1)
    prof = rng.choice(person["professions"])
    born = year_between(rng, 1700, 1900)
    age = rng.randint(38, 91)
    died = born + age
    he, his, him = ("she", "her", "her") if female else ("he", "his", "him")
    nick_reason, nick = pick_pair(rng, person["nick_reasons"])
    study_age = rng.randint(14, 22)
    values = {
        "Name": name,
        "ref": name,
        "Given": given,
        "Surname": surname,
        "he": he,
        "He": cap(he),
        "his": his,
        "His": cap(his),
        "him": him,
        "himself": "herself" if female else "himself",
        "born_year": born,
        "died_year": died,
        "death_age": age,
        "base_year": born,
        "nationality": rng.choice(person["nationalities"]),
        "profession": prof["profession"],
        "subject": prof["subject"],
        "work_noun": prof["work_noun"],
        "work_verb": prof["work_verb"],
        "region": ctx["region"],
        "moved_to": ctx["moved_to"],
        "nick": nick,
        "nick_reason": nick_reason,
        "born_place": ctx["born_place"],
        "ordinal": rng.choice(FIELDS["ordinal"]),
        "parent_job": rng.choice(person["parent_jobs"]),
        "childhood": rng.choice(person["childhoods"]),
        "study_age": study_age,
        "study_year": born + study_age,
        "study_city": ctx["city"],
        "teacher": names.person(),
        "early_years": rng.choice(["two", "three", "four", "five"]),
        "place": prof["place"],
        "work_year": born + rng.randint(24, min(age - 2, 60)),
        "work_title": work_title(rng),
        "marriage_year": born + rng.randint(20, 35),
        "spouse": names.person(not female),
        "spouse_job": rng.choice(person["parent_jobs"]),
        "spouse_town": ctx["far_city"],
        "children": rng.choice(["two", "three", "four", "six"]),
        "move_year": born + rng.randint(25, 36),
        "prize": rng.choice(FIELDS["prize"]),
        "prize_year": born + rng.randint(30, age - 1),
        "trait": rng.choice(person["traits"]),
        "hair": rng.choice(person["hair"]),
        "volumes": rng.randint(6, 40),
        "pupil": names.person(),
        "died_place": ctx["died_place"],
    }
    values["work_effect"] = prof["work_effect"].replace("{him}", him)
    values["spouse_rel"] = "son" if female else "daughter"
    values["spouse_word"] = "husband" if female else "wife"
    pupil_female = rng.random() < 0.4
    values["pupil"] = names.person(pupil_female)
    values["pupil_self"] = "herself" if pupil_female else "himself"
    return values


def work_title(rng):
    person = WORDS["person"]
    return "The " + rng.choice(person["title_adjectives"]) + " " + rng.choice(person["title_nouns"])


def plural(noun):
    if noun.endswith("deer"):
        return noun
    if noun.endswith(("ch", "sh", "s", "x")):
        return noun + "es"
    return noun + "s"


def animal_values(rng, names, ctx):
    animal = WORDS["animal"]
    info = animal["classes"][ctx["class"]]
    head = ctx["head"]
    common = ctx["name"]
    food = rng.choice(info["foods"])
    predator, predator2 = rng.sample(animal["predators"], 2)
    status, status_reason = pick_pair(rng, animal["statuses"])
    disc_year = year_between(rng, 1760, 1950)
    length = rng.randint(4, 60) if info["unit"] == "centimetres" else rng.randint(8, 90)
    if ctx["class"] == "mammal" and head == "deer":
        length = rng.randint(80, 150)
    values = {
        "common": common,
        "ref": "the " + common,
        "sci": ctx["sci"],
        "head": head,
        "size": info["size"],
        "class_noun": info["noun"],
        "habitat": rng.choice(info["habitats"]),
        "region": ctx["region"],
        "local_name": ctx["local_name"],
        "meaning": rng.choice(animal["meanings"]),
        "disc_year": disc_year,
        "base_year": disc_year,
        "discoverer": names.person(),
        "disc_place": ctx["disc_place"],
        "other_mod": rng.choice([m for m in animal["modifiers"] if m not in common.split()]),
        "length": f"{length} {info['unit']}",
        "cover": info["cover"],
        "body_part": info["body"],
        "food": food,
        "food_cap": cap(food),
        "forage": rng.choice(info["forages"]),
        "active_time": rng.choice(animal["active_times"]),
        "winter": rng.choice(animal["winters"]),
        "move": info["move"],
        "sound": info["sound"],
        "young": info["young"],
        "weeks": rng.randint(3, 14),
        "group": rng.choice([5, 8, 12, 20, 40, 60]),
        "clutch": rng.choice(info["clutches"]) if info["lay"] else "no",
        "home": info["home"],
        "predator": predator,
        "predator2": predator2,
        "lifespan": f"{rng.randint(2, 25)} years",
        "status": status,
        "status_reason": status_reason,
        "reserve_year": year_between(rng, 1950, 2015),
        "animals": plural(common),
    }
    return values


def animal_plan(info):
    plan = {name: list(section) for name, section in WORDS["animal"]["plan"].items()}
    if not info["lay"]:  # mammals: no eggs, a litter instead
        section = plan["description"]
        section[:] = [s for s in section if "pool" in s or "eggs" not in s["templates"][0]]
        section.insert(4, WORDS["animal"]["birth_slot"])
    return plan


def ship_values(rng, names, ctx):
    ship = WORDS["ship"]
    built = year_between(rng, 1760, 1920)
    fate_kind, fate_template = pick_pair(rng, ship["fates"])
    service = rng.randint(6, 45)
    fate_year = built + service
    values = {
        "Ship": ctx["ship"],
        "The_ship": "The " + ctx["ship"],
        "the_ship": "the " + ctx["ship"],
        "ref": "the " + ctx["ship"],
        "ship_type": rng.choice(ship["types"]),
        "built_year": built,
        "base_year": built,
        "yard": rng.choice(FIELDS["shipyard_adj"]),
        "yard_town": ctx["yard_town"],
        "company": ctx["company"],
        "fleet_ord": ctx["fleet_ord"],
        "nick": rng.choice(ship["nicknames"]),
        "cargo": rng.choice(ship["cargoes"]),
        "home_port": ctx["home_port"],
        "destination": ctx["destination"],
        "length": f"{rng.randint(18, 95)} metres",
        "speed": f"{rng.randint(6, 17)} knots",
        "captain": names.person(False),
        "cap_years": rng.randint(4, 30),
        "command_years": rng.randint(2, max(2, service - 1)),
        "maiden_year": built + 1,
        "days": rng.randint(5, 60),
        "crew": rng.randint(8, 90),
        "passengers": rng.randint(6, 200),
        "record_year": built + rng.randint(2, max(3, service - 1)),
        "record_days": rng.randint(3, 40),
        "storm_year": built + rng.randint(1, service),
        "lost_part": rng.choice(ship["lost_parts"]),
        "rescue_year": built + rng.randint(1, service),
        "rescued": rng.randint(3, 30),
        "refit_year": built + rng.randint(3, service),
        "refit": rng.choice(ship["refits"]),
        "tons": thousands(rng.randint(2, 60) * 50),
        "service": service,
        "fate_year": fate_year,
        "fate_place": ctx["fate_place"],
        "fate_kind": fate_kind,
        "museum_town": ctx["museum_town"],
        "found_year": year_between(rng, 1950, 2019),
    }
    storm = rng.choice(FIELDS["storm"])
    sub = {"fate_place": "{fate_place}", "fate_year": "{fate_year}", "storm": storm}
    values["fate_text"] = fate_template.format(**sub)
    short = fate_template.format(**sub).replace(" in {fate_year}", "")
    values["fate_text_short"] = short
    values["storm"] = storm
    values["storm2"] = rng.choice([s for s in FIELDS["storm"] if s != storm])
    values["relic"] = rng.choice(FIELDS["relic"])
    return values


def expand_nested(sentence_template, values):
    """Fate texts hold fields of their own: substitute them first. A sentence
    that opens with a pronoun opens with {Subj} instead: the pronoun or the
    subject's name, drawn at each use (see subject_values)."""
    for field in ("fate_text_short", "fate_text"):
        if field in values:
            sentence_template = sentence_template.replace("{%s}" % field, values[field])
    for opening, field in SUBJECT_OPENINGS:
        if sentence_template.startswith(opening):
            return field + sentence_template[len(opening) :]
    return sentence_template


SUBJECT_OPENINGS = (
    ("{He} ", "{Subj} "),
    ("It ", "{Subj} "),
    ("She ", "{Subj} "),
    ("Its ", "{Subjs} "),
    ("Her ", "{Subjs} "),
)


def subject_values(kind, values):
    """{Subj} / {Subjs}: a sentence-opening pronoun or the subject's name."""
    name = {
        "town": values.get("Name"),
        "person": values.get("Surname"),
        "animal": "The " + values.get("common", ""),
        "ship": values.get("The_ship"),
        "invention": values.get("The_device"),
    }[kind]
    pronoun = {
        "town": ("It", "Its"),
        "person": (values.get("He"), values.get("His")),
        "animal": ("It", "Its"),
        "ship": ("She", "Her"),
        "invention": ("It", "Its"),
    }[kind]
    return {"Subj": Choice([pronoun[0], name]), "Subjs": Choice([pronoun[1], name + "'s"])}


def invention_values(rng, names, ctx):
    invention = WORDS["invention"]
    device = ctx["device"]
    part = device["part"]
    inv_year = year_between(rng, 1720, 1910)
    improvement, benefit = pick_pair(rng, invention["improvements"])
    inventor = ctx["inventor"]
    material, material2 = rng.sample(invention["materials"], 2)
    if "glass" in part or "gauze" in part:
        material = rng.choice(invention["wire" if "gauze" in part else "glass"])
    return {
        "The_device": "The " + ctx["name"],
        "the_device": "the " + ctx["name"],
        "ref": "the " + ctx["name"],
        "device": device["device"],
        "description": device["description"],
        "purpose": device["purpose"],
        "problem": device["problem"],
        "part": part,
        "inventor": inventor,
        "Inventor_surname": inventor.split()[-1],
        "inv_year": inv_year,
        "base_year": inv_year,
        "inv_job": rng.choice(invention["inventor_jobs"]),
        "inv_town": ctx["inv_town"],
        "inv_past": rng.choice(invention["inventor_pasts"]),
        "test_place": ctx["test_place"],
        "test_year": inv_year + rng.randint(1, 4),
        "patent_year": inv_year + rng.randint(2, 6),
        "power": rng.choice(invention["powers"]),
        "material": material,
        "material2": material2,
        "weight": f"{rng.randint(3, 900)} kilograms",
        "operators": rng.choice(invention["operators"]),
        "assembly_days": rng.randint(2, 30),
        "price": rng.randint(15, 400),
        "service_days": rng.choice([7, 10, 14, 30]),
        "improve_year": inv_year + rng.randint(8, 30),
        "improver": names.person(),
        "improvement": improvement,
        "benefit": benefit,
        "adopt_year": inv_year + rng.randint(10, 30),
        "units": thousands(rng.choice([300, 800, 1200, 2500, 4000, 9000, 15000])),
        "adopt_region": ctx["adopt_region"],
        "replacement": rng.choice(invention["replacements"]),
        "replace_year": inv_year + rng.randint(45, 110),
        "museum_town": ctx["museum_town"],
    }


def extra_values(kind, rng, names, values, ctx, pick_place):
    """The fields of a kind's extras (the sentences long documents add)."""
    words = WORDS[kind]
    base = values["base_year"]
    if kind == "town":
        return {
            "street": rng.choice(words["streets"]),
            "gates": rng.choice(["two", "three", "four", "five"]),
            "family": names.surname(),
            "inn_year": rng.randint(base + 10, 1800),
            "produce": rng.choice(words["produce"]),
            "school_year": rng.randint(1650, 1890),
            "dialect_topic": values["industry"],
            "hospital_year": rng.randint(1850, 1950),
            "old_use": rng.choice(words["old_uses"]),
            "streets": rng.choice(["three", "four", "six", "eight", "eleven"]),
            "war_year": rng.randint(base + 50, 1870),
            "spice": rng.choice(words["spices"]),
            "band_year": rng.randint(1820, 1930),
            "flood_year": rng.randint(1600, 1960),
        }
    if kind == "person":
        born, died = values["born_year"], values["died_year"]
        return {
            "travel_year": rng.randint(born + 18, died - 1),
            "travel_place": pick_place(),
            "travel_weeks": rng.randint(2, 20),
            "colleague": names.person(),
            "letters": rng.choice([40, 100, 200, 350, 600]),
            "criticism": rng.choice(words["criticisms"]),
            "possession": rng.choice(words["possessions"]),
            "ill_year": rng.randint(born + 20, died - 1),
            "languages": rng.choice(["three", "four", "five", "six"]),
            "work_title2": work_title(rng),
            "summer_year": rng.randint(born + 15, died - 1),
            "summer_place": pick_place(),
            "sibling": names.given(rng.random() < 0.5),
            "sibling_job": rng.choice(words["parent_jobs"]),
            "rival": names.person(),
            "quarrel_years": rng.randint(2, 20),
            "flowers": rng.choice(words["flowers"]),
        }
    if kind == "animal":
        info = words["classes"][ctx["class"]]
        relative_head = rng.choice(info["heads"])
        return {
            "young_colour": rng.choice(words["young_colours"]),
            "belief": rng.choice(words["beliefs"]),
            "painter": names.person(),
            "plate_year": rng.randint(base, 1950),
            "symbol_year": rng.randint(1900, 2010),
            "study_city": pick_place(),
            "home_km": rng.randint(2, 300),
            "island_year": rng.randint(base + 5, 2010),
            "relative": rng.choice(words["modifiers"]) + " " + relative_head,
            "relative_habitat": rng.choice(info["habitats"]),
            "relative_region": ctx["relative_region"],
            "heads": plural(ctx["head"]),
            "fossil_place": pick_place(),
        }
    if kind == "ship":
        built, service = values["built_year"], values["service"]
        return {
            "figure": rng.choice(words["figures"]),
            "carver_town": pick_place(),
            "charter_year": built + rng.randint(1, service),
            "navy_cargo": rng.choice(words["navy_cargoes"]),
            "navy_dest": pick_place(),
            "gales": rng.randint(3, 30),
            "apprentice": names.person(False),
            "aground_place": pick_place(),
            "aground_year": built + rng.randint(1, service),
            "aground_days": rng.randint(2, 40),
            "wood": rng.choice(words["woods"]),
            "cook": names.person(),
            "diary_year": built + service + rng.randint(5, 60),
            "sail_town": pick_place(),
            "fibre": rng.choice(words["fibres"]),
            "value": thousands(rng.randint(20, 400) * 100),
            "value_year": built + rng.randint(0, service),
            "guns": rng.choice(["two", "four", "six", "eight"]),
            "sea": rng.choice(FIELDS["sea"]),
            "strike_port": pick_place(),
            "ice_weeks": rng.randint(2, 12),
            "ice_coast": pick_place(),
            "mast_height": rng.randint(18, 50),
        }
    inv_year = values["inv_year"]
    return {
        "news_city": pick_place(),
        "press_name": rng.choice(words["press_names"]),
        "expo_city": pick_place(),
        "expo_year": inv_year + rng.randint(3, 30),
        "small_use": rng.choice(words["small_uses"]),
        "maker": names.word() + " " + rng.choice(words["maker_words"]),
        "rights_price": thousands(rng.randint(5, 300) * 100),
        "workers": rng.choice([40, 120, 300, 800, 1500]),
        "enc_year": inv_year + rng.randint(5, 60),
        "languages": rng.choice(["three", "four", "five", "six"]),
        "accident_year": inv_year + rng.randint(3, 40),
        "accident_place": pick_place(),
    }


# ---------------------------------------------------------------------------
# The world: subjects with names and cross references.


class Document:
    def __init__(self, kind, title, values, sections):
        self.kind = kind
        self.title = title
        self.values = values
        self.sections = sections  # lists of Sentence

    @property
    def sentences(self):
        return [s for section in self.sections for s in section]


def make_world(rng):
    names = Names(rng)
    landforms = COMMON["landforms"]
    regions = [f"the {names.word()} {rng.choice(landforms)}" for _ in range(24)] + [
        f"the province of {names.word(3)}" for _ in range(12)
    ]
    rivers = [names.word() for _ in range(60)]
    cities = [names.town() for _ in range(30)]
    towns = [names.town() for _ in range(DOCS_PER_KIND)]
    places = [names.town() for _ in range(260)]
    return names, regions, rivers, cities, towns, places


def make_documents(rng):
    names, regions, rivers, cities, towns, places = make_world(rng)
    all_places = towns + places

    def place():
        return rng.choice(all_places)

    docs = []
    plan_kinds = [k for k in KINDS for _ in range(DOCS_PER_KIND)]
    counters = {k: 0 for k in KINDS}
    for kind in plan_kinds:
        i = counters[kind]
        counters[kind] += 1
        words = WORDS[kind]
        plan = words["plan"]
        if kind == "town":
            name = towns[i]
            first, last = name.split()[0], name.split()[-1]
            ctx = {
                "name": name,
                "region": rng.choice(regions),
                "river": rng.choice(rivers),
                "city": rng.choice(cities),
                "far_city": rng.choice(cities),
                "town_short": last if first in NAMES["town_prefixes"] else first,
            }
            values = town_values(rng, names, ctx)
            title = name
        elif kind == "person":
            female = rng.random() < 0.45
            name = names.person(female)
            ctx = {
                "name": name,
                "female": female,
                "region": rng.choice(regions),
                "moved_to": place(),
                "born_place": place(),
                "city": rng.choice(cities),
                "far_city": place(),
                "died_place": place(),
            }
            values = person_values(rng, names, ctx)
            title = name
        elif kind == "animal":
            classes = words["classes"]
            cls = list(classes)[i % len(classes)]
            info = classes[cls]
            head = rng.choice(info["heads"])
            while True:
                if rng.random() < 0.5:
                    name = rng.choice(words["modifiers"]) + " " + names.word().lower()
                else:
                    name = rng.choice(words["modifiers"]) + " " + head
                if name not in names.used:
                    names.used.add(name)
                    break
            sci = names.genus() + " " + rng.choice(words["epithets"])
            ctx = {
                "name": name,
                "class": cls,
                "head": head,
                "sci": sci,
                "region": rng.choice(regions),
                "local_name": names.word().lower(),
                "disc_place": place(),
                "relative_region": rng.choice(regions),
            }
            values = animal_values(rng, names, ctx)
            values["litter"] = rng.choice(["two", "three", "four", "five"])
            plan, title = animal_plan(info), name
        elif kind == "ship":
            roll = rng.random()
            while True:
                if roll < 0.35:
                    adjective = rng.choice(words["name_adjectives"])
                    ship = adjective + " " + rng.choice(words["name_nouns"])
                elif roll < 0.7:
                    ship = names.word() + " " + rng.choice(words["name_nouns"])
                else:
                    ship = names.given(True) + " " + names.surname()
                if ship not in names.used:
                    names.used.add(ship)
                    break
                roll = rng.random()
            ctx = {
                "ship": ship,
                "yard_town": place(),
                "home_port": place(),
                "destination": place(),
                "fate_place": place(),
                "museum_town": place(),
                "company": names.word() + " " + rng.choice(words["company_words"]),
                "fleet_ord": rng.choice(words["fleet_ordinals"]),
            }
            values = ship_values(rng, names, ctx)
            title = "the " + ship
        else:
            devices = words["devices"]
            device = devices[i % len(devices)]
            inventor = names.person()
            while True:
                if rng.random() < 0.6:
                    name = inventor.split()[-1] + " " + device["device"]
                else:
                    adjective = rng.choice(words["name_adjectives"])
                    name = adjective + " " + device["device"] + " of " + place()
                if name not in names.used:
                    names.used.add(name)
                    break
            ctx = {
                "name": name,
                "device": device,
                "inventor": inventor,
                "inv_town": place(),
                "test_place": place(),
                "museum_town": place(),
                "adopt_region": rng.choice(regions),
            }
            values = invention_values(rng, names, ctx)
            title = "the " + name
        values["gen_year"] = min(1990, values["base_year"] + rng.randint(10, 80))
        values["gen_town"] = place()
        values.update(extra_values(kind, rng, names, values, ctx, place))
        values.update(subject_values(kind, values))
        length = rng.choices(["short", "normal", "long"], [0.2, 0.6, 0.2])[0]
        sections = {}
        for section_name, section in plan.items():
            section = [
                {**slot, "templates": [expand_nested(t, values) for t in slot["templates"]]}
                for slot in section
            ]
            sections[section_name] = pick_section(rng, section, values, short=length == "short")
        if length == "long":
            extras = words["extras"]
            total = sum(len(section) for section in sections.values())
            count = min(rng.randint(5, 14), MAX_SENTENCES - total)
            chosen = rng.sample(extras, count)
            chosen.sort(key=extras.index)
            extra = [render_checked(rng, expand_nested(t, values), values, False) for t in chosen]
            target = sections[EXTRA_SECTION[kind]]
            at = len(target) - 1 if kind == "ship" else len(target)
            target[at:at] = extra
        sections = [section for section in sections.values() if section]
        docs.append(Document(kind, title, values, sections))
    rng.shuffle(docs)
    return docs


# ---------------------------------------------------------------------------
# Outputs.


def corpus_text(docs):
    return "\n\n".join("\n".join(s.text for s in doc.sentences) for doc in docs) + "\n"


def split_documents(rng, docs):
    """{split name: [doc]} per SPLIT_DOCS, drawn per kind from a shuffled order."""
    splits = {name: [] for name in SPLIT_DOCS}
    for kind in KINDS:
        of_kind = [d for d in docs if d.kind == kind]
        rng.shuffle(of_kind)
        start = 0
        for name, n in SPLIT_DOCS.items():
            splits[name].extend(of_kind[start : start + n])
            start += n
    return splits


def classify_rows(rng, splits, docs):
    """Rows (sentence, label) of each split: kind-specific sentences that occur
    once in the corpus (so each belongs to one document of one split)."""
    uses = {}
    for doc in docs:
        for s in doc.sentences:
            uses[s.text] = uses.get(s.text, 0) + 1
    seen = set()
    out = {}
    for split in ("train", "dev", "test"):
        rows = []
        for kind in KINDS:
            pool = []
            for doc in splits["cls_" + split]:
                if doc.kind != kind:
                    continue
                candidates = [
                    s
                    for s in doc.sentences
                    if not s.generic and uses[s.text] == 1 and s.text not in seen
                ]
                rng.shuffle(candidates)
                pool.append(candidates)
            picked = []
            while len(picked) < CLS_SIZES[split] and any(pool):
                for candidates in pool:
                    if candidates and len(picked) < CLS_SIZES[split]:
                        s = candidates.pop()
                        if s.text not in seen:
                            seen.add(s.text)
                            picked.append((s.text, kind))
            if len(picked) < CLS_SIZES[split]:
                raise RuntimeError(f"not enough {kind} sentences for {split}")
            rows.extend(picked)
        rng.shuffle(rows)
        out[split] = rows
    return out


def tsv_text(rows):
    lines = ["sentence\tlabel"] + [f"{text}\t{label}" for text, label in rows]
    for line in lines:
        assert line.count("\t") == 1, line
    return "\n".join(lines) + "\n"


def answer_ok(text, start, end):
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    return before in ' "' and after in ' .,;:"'


def paragraphs_of(doc):
    """Sections as paragraphs; long sections cut into runs of at most 5 sentences."""
    out = []
    for section in doc.sections:
        n = len(section)
        parts = max(1, -(-n // 5))
        size = -(-n // parts)
        for i in range(0, n, size):
            out.append(section[i : i + size])
    return out


def squad_questions(rng, doc):
    """Candidate (paragraph index, field, question, answer text, answer_start) of
    a doc. Its kind's "questions" map each fact (a template field) to a list of
    questions, or to {"where": regex, "ask": list} where the regex must match
    the sentence template for the fact to be asked there."""
    values = dict(doc.values)
    questions = WORDS[doc.kind]["questions"]
    candidates, asked = [], set()
    for p, paragraph in enumerate(paragraphs_of(doc)):
        offset = 0
        for sentence in paragraph:
            for field, (start, end) in sentence.spans.items():
                if field in asked or field not in questions:
                    continue
                if not answer_ok(sentence.text, start, end):
                    continue
                templates = questions[field]
                if isinstance(templates, dict):
                    if not re.search(templates["where"], sentence.template):
                        continue
                    templates = templates["ask"]
                template = rng.choice(templates)
                missing = [n for n in FIELD.findall(template) if n not in values]
                if missing:
                    raise KeyError(f"question {template!r} needs {missing}")
                question, _ = render(template, values, rng)
                answer = sentence.text[start:end]
                asked.add(field)
                candidates.append((p, field, question, answer, offset + start))
            offset += len(sentence.text) + 1
    return candidates


def squad_data(rng, docs, split, prefix):
    data = []
    per_kind = SQUAD_SIZES[split]
    chosen = {}
    for kind in KINDS:
        cands = []
        for doc in docs:
            if doc.kind == kind:
                cands.extend((doc, c) for c in squad_questions(rng, doc))
        rng.shuffle(cands)
        if len(cands) < per_kind:
            raise RuntimeError(f"not enough {kind} questions for {split}: {len(cands)}")
        for doc, c in cands[:per_kind]:
            chosen.setdefault(id(doc), []).append(c)
    n = 0
    for doc in docs:
        if id(doc) not in chosen:
            continue
        paragraphs = paragraphs_of(doc)
        entry = {"title": doc.title, "paragraphs": []}
        by_paragraph = {}
        for c in sorted(chosen[id(doc)], key=lambda c: (c[0], c[4])):
            by_paragraph.setdefault(c[0], []).append(c)
        for p, qs in sorted(by_paragraph.items()):
            context = " ".join(s.text for s in paragraphs[p])
            qas = []
            for _, _, question, answer, start in qs:
                n += 1
                assert context[start : start + len(answer)] == answer
                qas.append(
                    {
                        "id": f"{prefix}{n:04d}",
                        "question": question,
                        "answers": [{"text": answer, "answer_start": start}],
                    }
                )
            entry["paragraphs"].append({"context": context, "qas": qas})
        data.append(entry)
    return {"version": "1.1", "data": data}


def build():
    """{relative path: bytes} of every file this script writes."""
    rng = random.Random(SEED)
    docs = make_documents(rng)
    split_rng = random.Random(SEED + 1)
    splits = split_documents(split_rng, docs)
    files = {"corpus.txt": corpus_text(docs)}
    rows = classify_rows(random.Random(SEED + 2), splits, docs)
    for split, split_rows in rows.items():
        files[f"classify/{split}.tsv"] = tsv_text(split_rows)
    qa_rng = random.Random(SEED + 3)
    for split in ("train", "dev"):
        order = [d for d in docs if d in splits["squad_" + split]]
        squad = squad_data(qa_rng, order, split, f"{split}-")
        files[f"squad/{split}.json"] = json.dumps(squad, indent=1, ensure_ascii=True) + "\n"
    return {path: text.encode("utf-8") for path, text in files.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--output_dir",
        default=DEFAULT_OUTPUT,
        help="folder to write (default: demo/data next to this script)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the files in --output_dir differ",
    )
    args = parser.parse_args(argv)
    files = build()
    if args.check:
        stale = []
        for path, data in sorted(files.items()):
            full = os.path.join(args.output_dir, path)
            try:
                with open(full, "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            if not same:
                stale.append(path)
        if stale:
            print(
                "out of date: " + ", ".join(stale) + "; run python demo/make_data.py",
                file=sys.stderr,
            )
            return 1
        print(f"{len(files)} files up to date in {args.output_dir}")
        return 0
    for path, data in sorted(files.items()):
        full = os.path.join(args.output_dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files to {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
