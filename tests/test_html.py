"""The page builder (jaxbench.render.html): escaping, grouping by kind, graph links, offline."""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import asv
import pytest

from jaxbench.analyse.detect import Regression
from jaxbench.errors import UsageError
from jaxbench.kinds import Kind, kind_of
from jaxbench.render import html
from jaxbench.store.results import History, Point, SeriesKey

ASV_INDEX = Path(asv.__file__).parent / "www" / "index.html"
VENDOR = Path(html.__file__).parents[1] / "assets" / "vendor"
HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>&amp;'


def regression(
    benchmark: str,
    *,
    bad: str = "b" * 40,
    good: str | None = "a" * 40,
    params: tuple[str, ...] = ("64",),
    machine: str = "box",
    env: str = "virtualenv-py3.11",
    date: int = 1_700_000_000_000,
    before: float = 1e-5,
    after: float = 1.3e-5,
    unit: str = "seconds",
) -> Regression:
    return Regression(
        key=SeriesKey(machine, env, benchmark, params, "v1"),
        kind=kind_of(benchmark),
        good_commit=good,
        bad_commit=bad,
        date=date,
        before=before,
        after=after,
        ratio=after / before,
        unit=unit,
    )


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> Tags:
    parser = Tags()
    parser.feed(page)
    parser.close()
    return parser


def section_commits(page: str) -> dict[str, list[str]]:
    """Section id -> data-commit of its rows, in page order."""
    found: dict[str, list[str]] = {}
    current = None
    for tag, attrs in parse(page).tags:
        if tag == "section":
            current = attrs.get("id") or ""
            found[current] = []
        elif tag == "tr" and "data-commit" in attrs and current is not None:
            found[current].append(attrs["data-commit"] or "")
    return found


def render(regressions: list[Regression], **kwargs: object) -> str:
    options: dict[str, object] = {"env_params": {}, "param_names": {}}
    options.update(kwargs)
    return html.render_regressions_page(regressions, (), **options)  # type: ignore[arg-type]


def test_hostile_names_are_escaped_everywhere() -> None:
    bad = regression(
        f"workloads.{HOSTILE}.time_warm",
        params=(HOSTILE,),
        machine=HOSTILE,
        env=HOSTILE,
        bad=HOSTILE,
        good=None,
        unit=HOSTILE,
    )
    page = html.render_regressions_page(
        [bad],
        html.summarize(History(points=(Point(bad.key, HOSTILE, bad.date, 1.0),))),
        env_params={(HOSTILE, HOSTILE): {"machine": HOSTILE, HOSTILE: HOSTILE}},
        param_names={bad.key.benchmark: (HOSTILE,)},
        project=HOSTILE,
        warnings=(HOSTILE,),
    )
    tags = parse(page)
    assert {tag for tag, _ in tags.tags} <= {
        "html",
        "head",
        "meta",
        "title",
        "link",
        "body",
        "nav",
        "a",
        "h1",
        "h2",
        "p",
        "ul",
        "li",
        "span",
        "section",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "br",
    }
    for _, attrs in tags.tags:
        assert not any(name.startswith("on") for name in attrs)
    # The name survives, as text, in the benchmark cell, machine, env and warnings.
    assert "".join(tags.text).count(HOSTILE) >= 5
    hrefs = [a.get("href") or "" for t, a in tags.tags if t == "a"]
    links = [href for href in hrefs if href.startswith("../index.html#")]
    assert len(links) == 2  # the benchmark's graph and asv's own regressions list
    assert all("<" not in link and '"' not in link for link in links)


def test_regressions_are_grouped_by_kind_in_reading_order() -> None:
    found = [
        regression("w.P.time_warm", bad="t" * 40),
        regression("w.P.track_work_flops", bad="w" * 40, unit="flops"),
        regression(
            "w.P.track_tolerance_used", bad="a" * 40, before=0.5, after=1.5, unit="unitless"
        ),
        regression("w.P.track_compile_seconds", bad="c" * 40),
        regression("w.P.time_other", bad="u" * 40),
        regression("w.P.peakmem_call", bad="m" * 40, unit="bytes"),
    ]
    page = render(found)
    sections = section_commits(page)
    # the failing benchmarks come first (none here), then the kinds in reading order
    assert list(sections)[:7] == [
        "failing",
        "accuracy",
        "compile",
        "work",
        "time",
        "memory",
        "other",
    ]
    assert sections["failing"] == []
    assert sections["accuracy"] == ["a" * 40]
    assert sections["compile"] == ["c" * 40]
    assert sections["work"] == ["w" * 40]
    assert sections["time"] == ["t" * 40, "u" * 40]  # input order (newest first) is kept
    assert sections["memory"] == ["m" * 40]
    assert sections["other"] == []
    assert "outside tolerance" in page
    assert page.count("None flagged.") == 1


def test_tolerance_flag_only_when_over_one() -> None:
    page = render([regression("w.P.track_tolerance_used", before=0.2, after=0.6, unit="unitless")])
    assert "outside tolerance" not in page


def test_no_regressions_page_says_so_for_every_kind() -> None:
    page = render([])
    assert page.count("None flagged.") == len(html.KIND_SECTIONS)
    assert "<script" not in page
    assert "default-src 'self'" in page


def test_unconfirmed_steps_are_counted_not_listed() -> None:
    import dataclasses

    from jaxbench.analyse.detect import Evidence

    step = dataclasses.replace(regression("b.C.track_compile_seconds"), evidence=Evidence.UNTESTED)
    page = render([], unconfirmed=[step, step])
    text = "".join(parse(page).text)
    assert "Not listed: 2 fitted steps that the values do not confirm" in text
    assert "2 with fewer than 4 commits on a side" in text
    assert page.count("None flagged.") == len(html.KIND_SECTIONS)
    assert 'class="unconfirmed"' not in render([])


def asv_hash(url: str) -> tuple[str, list[tuple[str, str]]]:
    """Decode a graph URL the way asv.js's parse_hash_string does."""
    fragment = url.split("#", 1)[1]
    location, _, query = fragment.partition("?")
    pairs = [part.split("=") for part in query.split("&")]
    assert all(len(pair) == 2 for pair in pairs), query
    return unquote(location), [(unquote(k), unquote(v)) for k, v in pairs]


def test_graph_url_follows_asv_hash_format() -> None:
    found = regression(
        "workloads.Predict.time_warm",
        params=("64", "'f32'"),
        good="0123456789" * 4,
        bad="abcdef0123" * 4,
    )
    url = html.graph_url(
        found, env_params={"machine": "box", "python": "3.11"}, param_names=("rows", "dtype")
    )
    assert url == (
        "../index.html#workloads.Predict.time_warm?machine=box&python=3.11"
        "&p-rows=64&p-dtype=%27f32%27&commits=01234567-abcdef01"
    )


def test_graph_url_round_trips_hostile_values() -> None:
    name = "w.a&b=c?d#e/f.time_x"
    found = regression(name, params=("a&b=c", "x y%"), good=None, bad="f" * 40)
    url = html.graph_url(
        found,
        env_params={"machine": "m&=?#", "jax": "0.10.2"},
        param_names=("p&", "q="),
        hash_length=12,
    )
    assert url.count("#") == 1
    location, pairs = asv_hash(url)
    assert location == name
    assert pairs == [
        ("jax", "0.10.2"),
        ("machine", "m&=?#"),
        ("p-p&", "a&b=c"),
        ("p-q=", "x y%"),
        ("commits", "f" * 12),
    ]


def test_rows_link_with_env_params_of_their_environment() -> None:
    found = regression("w.P.time_warm", machine="m1", env="env-a")
    page = render(
        [found],
        env_params={
            ("m1", "env-a"): {"machine": "m1", "jax": "0.10.2"},
            ("m1", "env-b"): {"machine": "m1", "jax": "0.9.2"},
        },
        param_names={"w.P.time_warm": ("rows",)},
    )
    assert 'href="../index.html#w.P.time_warm?jax=0.10.2&amp;machine=m1&amp;p-rows=64&amp;' in page
    assert "rows=64" in page


def test_summarize_counts_per_environment() -> None:
    def point(env: str, bench: str, commit: str, date: int, value: float | None) -> Point:
        return Point(SeriesKey("box", env, bench, (), None), commit, date, value)

    history = History(
        points=(
            point("e1", "a.time_x", "c1", 10, 1.0),
            point("e1", "a.time_x", "c2", 20, None),
            point("e1", "a.track_work_flops", "c2", 20, 3.0),
            point("e2", "a.time_x", "c1", 10, 1.0),
        )
    )
    assert html.summarize(history) == (
        html.EnvSummary(
            "box",
            "e1",
            commits=2,
            benchmarks=2,
            series=2,
            failed_points=1,
            first_date=10,
            last_date=20,
        ),
        html.EnvSummary(
            "box",
            "e2",
            commits=1,
            benchmarks=1,
            series=1,
            failed_points=0,
            first_date=10,
            last_date=10,
        ),
    )


# ---------------------------------------------------------------------------
# asv's index.html, offline


def test_localized_asv_index_loads_nothing_remote() -> None:
    original = ASV_INDEX.read_text(encoding="utf-8")
    page = html.localize_asv_index(original)
    resources = [(t, a) for t, a in parse(page).tags if t in ("script", "link")]
    urls = [a.get("src") or a.get("href") or "" for _, a in resources]
    remote = [url for url in urls if re.match(r"(https?:)?//", url)]
    assert remote == []
    vendored = [a.get("src") or a.get("href") or "" for t, a in resources]
    wanted = {f"{html.VENDOR_DIR}/{asset.path}" for asset in html.VENDORED}
    assert wanted <= set(vendored)
    for asset in html.VENDORED:
        assert (VENDOR / asset.path).is_file(), asset.path
    assert page.count(html.NAV_LINK_ID) == 1
    assert f'href="{html.REGRESSIONS_PAGE}"' in page


def test_vendored_copies_marked_identical_match_asvs_integrity_hashes() -> None:
    """The SRI hash kept in the page must hold for the vendored bytes."""
    original = ASV_INDEX.read_text(encoding="utf-8")
    page = html.localize_asv_index(original)
    checked = 0
    for tag, attrs in parse(page).tags:
        url = attrs.get("src") or attrs.get("href") or ""
        if tag not in ("script", "link") or not url.startswith(html.VENDOR_DIR):
            continue
        asset = next(a for a in html.VENDORED if url.endswith(a.path))
        integrity = attrs.get("integrity")
        if not asset.same_bytes:
            assert integrity is None
            continue
        assert integrity is not None
        assert integrity in original
        algorithm, _, expected = integrity.partition("-")
        digest = hashlib.new(algorithm, (VENDOR / asset.path).read_bytes()).digest()
        assert base64.b64encode(digest).decode() == expected, asset.path
        checked += 1
    assert checked == sum(a.same_bytes for a in html.VENDORED) == 5


def test_every_vendored_package_carries_its_licence() -> None:
    for package in {asset.path.split("/")[0] for asset in html.VENDORED}:
        names = {p.name for p in (VENDOR / package).iterdir()}
        assert names & {"LICENSE", "LICENSE.txt", "package.json"}, package


def test_unknown_cdn_file_is_an_error_naming_it() -> None:
    page = ASV_INDEX.read_text(encoding="utf-8").replace(
        "</head>", '<script src="https://cdn.example.com/new.js"></script></head>'
    )
    with pytest.raises(UsageError, match=r"https://cdn\.example\.com/new\.js.*vendor-assets"):
        html.localize_asv_index(page)


def test_kind_sections_cover_every_kind() -> None:
    assert {section.kind for section in html.KIND_SECTIONS} == set(Kind)


def test_unchecked_workloads_are_listed_with_their_reason_from_real_results(
    tmp_path: Path,
) -> None:
    """Real asv results: the newest ``track_answer_unchecked`` of each workload, and
    the reason its run kept beside them (``store/checks``), on the regressions page."""
    from conftest import AsvResultsWriter, commit_hash
    from jaxbench.store import checks
    from jaxbench.store.series_table import load_series_table

    writer = AsvResultsWriter(tmp_path / "results", machine="box")
    noise, train = "programs.NoiseFigures", "programs.TrainStepFigures"
    for cls in (noise, train):
        writer.add_benchmark(f"{cls}.track_answer_unchecked", params=[["256"]], unit="unchecked")
    writer.write_meta()
    first, newest = commit_hash(1), commit_hash(2)
    track = ".track_answer_unchecked"
    # Noise turned unchecked at the newest commit; TrainStep is checked there
    writer.write_result(first, 1_000, {noise + track: 0.0, train + track: 1.0})
    writer.write_result(newest, 2_000, {noise + track: 1.0, train + track: 0.0})
    for commit, cls, reason in ((first, train, "old"), (newest, noise, HOSTILE)):
        environ = {
            "JAXBENCH_COMMIT": commit,
            "JAXBENCH_ENV_NAME": "virtualenv-py3.11",
            "JAXBENCH_MACHINE": "box",
            "JAXBENCH_RESULTS_DIR": str(writer.root),
        }
        checks.save_unchecked(cls, ("256",), reason, environ=environ)

    found = checks.unchecked_workloads(
        load_series_table(writer.root, use_cache=False), checks.read_unchecked(writer.root)
    )
    assert found == (
        checks.UncheckedWorkload(
            "box", "virtualenv-py3.11", noise, ("256",), newest, 2_000, HOSTILE
        ),
    )
    page = render([], unchecked=found, param_names={noise + track: ["rows"]})
    assert section_commits(page)["unchecked"] == [newest]
    assert "<script>alert" not in page  # the reason is text, never markup
    tags = parse(page)
    assert HOSTILE in "".join(tags.text)
    (link,) = [a["href"] for t, a in tags.tags if t == "a" and noise in (a.get("href") or "")]
    location, query = asv_hash(link or "")
    assert location == noise + track
    assert ("p-rows", "256") in query
    assert '<a href="#unchecked">Unchecked workloads</a> <span class="count">1</span>' in page
    # a results directory without notes (an older jaxbench): listed, reason not kept
    (old,) = checks.unchecked_workloads(load_series_table(writer.root, use_cache=False), ())
    assert old.reason is None
    assert "not kept by this run" in render([], unchecked=[old])
    assert "None: every workload" in render([])
