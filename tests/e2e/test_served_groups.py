"""What is served, as the README says it (issue 24): every group/version its "Not served yet"
table lists answers upstream's 404 Status and is absent from discovery, and every resource
`kubectl api-resources` lists is really served — kubectl lists it and then reads it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from minikube_py.testing import Cluster
from tests.e2e.cluster_process import REPO

#: a row of the table under `<!-- not-served: ... -->`: | `group/version` | resources | why |
ROW = re.compile(r"^\| `(?P<gv>[\w.]+/v\w+)` \| (?P<resources>[^|]+) \|", re.MULTILINE)


def not_served() -> list[tuple[str, list[str]]]:
    text = (REPO / "README.md").read_text()
    table = text.split("<!-- not-served:", 1)[1].split("\n\n", 1)[0]
    rows = []
    for m in ROW.finditer(table):
        names = [n.strip() for n in m["resources"].split("(")[0].split(",")]
        rows.append((m["gv"], [n for n in names if re.fullmatch(r"[a-z]+", n)]))
    return rows


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with Cluster(nodes=0) as c:
        yield c


def test_the_readme_table_lists_groups() -> None:
    rows = not_served()
    assert len(rows) >= 5 and all(resources for _, resources in rows), rows


def test_what_the_readme_lists_as_not_served_answers_404(cluster: Cluster) -> None:
    served = set(cluster.kubectl("api-versions").stdout.split())
    for gv, resources in not_served():
        assert gv not in served, f"{gv} is served: take it out of the README's table"
        for resource in resources:
            path = f"/apis/{gv}/{resource}"
            answer = cluster.kubectl("get", "--raw", path, check=False)
            assert answer.returncode != 0, path
            assert "Error from server (NotFound): the server could not find the requested " \
                "resource" in answer.stderr, (path, answer.stderr)


def test_every_resource_kubectl_lists_is_served(cluster: Cluster) -> None:
    listed = cluster.kubectl("api-resources", "--verbs=list", "-o", "name").stdout.split()
    assert len(listed) > 50
    # one kubectl call reads them all: a resource listed but not served fails it
    cluster.kubectl("get", ",".join(listed), "-A", "-o", "name", timeout=120)
