"""`cudaenv db` and `cudaenv db update`: a newer compatibility database published beside a mirror
(<mirror>/cudaenv/db/index.json and <revision>/<file>.toml) is checked file by file and installed
in one step into $CUDAENV_ROOT/manifests; a damaged one is refused and the old one kept; an
unreachable mirror leaves every other command working; `mirror create` publishes a database that
`db update` accepts; resolve and doctor note a database older than 90 days."""

import datetime
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

from harness import BINARY, case, check, clean_env, expect_error, finish, mirror_server, run
from synthetic_mirror import toolkit_release

REPO_MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
NEW_RELEASE = ('\n[[release]]\nversion = "13.9.0"\nlabel = "13.9 GA"\nmin_driver = "650.10.01"\n'
               'sources = ["RN131"]\nconfidence = "high"\n')


def compiled_in_revision():
    """The revision of the database the binary was built with: the oldest among its files."""
    revisions = [re.search(r'^revision = "([^"]+)"', p.read_text(), re.M).group(1)
                 for p in REPO_MANIFESTS.glob("*.toml")]
    return min(revisions)


def newer(step):
    return f"{compiled_in_revision()}.{step}"


def utc_today():
    return datetime.datetime.now(datetime.timezone.utc).date()


def today():
    return utc_today().isoformat()


def publish(mirror, revision, date=None, add_release=True, edit=None):
    """Writes the repository's database as `revision` below <mirror>/cudaenv/db/ with its index,
    as a mirror serves it, dated `date` (default: the day its revision names); `add_release` adds
    CUDA 13.9.0, a release only this database knows; `edit(name, text)` changes a file after its
    sha256 is taken (a damaged copy)."""
    date = date or revision[:10]
    db = mirror / "cudaenv" / "db"
    files = []
    for path in sorted(REPO_MANIFESTS.glob("*.toml")):
        text = re.sub(r'^revision = "[^"]+"', f'revision = "{revision}"', path.read_text(), flags=re.M)
        if add_release and path.name == "cuda.toml":
            text += NEW_RELEASE
        data = text.encode()
        files.append({"name": path.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
        if edit:
            data = edit(path.name, data)
        (db / revision).mkdir(parents=True, exist_ok=True)
        (db / revision / path.name).write_bytes(data)
    index = {"format": 1, "revision": revision, "date": date, "files": files}
    (db / "index.json").write_text(json.dumps(index, indent=2))
    return index


def env_for(tmp, root="root"):
    (tmp / "sysroot").mkdir(exist_ok=True)
    return clean_env(tmp, CUDAENV_ROOT=tmp / root, CUDAENV_SYSROOT=tmp / "sysroot", CUDAENV_HTTP_BACKOFF_MS=20,
                     CUDAENV_HTTP_ATTEMPTS=2)


def db_json(env):
    return json.loads(run(["db", "--json"], env, check_exit=0).stdout)


def knows_13_9(env):
    """Whether resolve knows CUDA 13.9 (exit 3 and "unknown version" when it does not)."""
    proc = run(["resolve", "--no-detect", "--cuda", "13.9", "--driver", "660.10.01", "--json"], env)
    if proc.returncode == 3:
        check("unknown version: cuda 13.9" in proc.stderr or "unknown version" in proc.stderr, proc.stderr)
        return False
    check(proc.returncode == 0, f"resolve --cuda 13.9: exit {proc.returncode}: {proc.stderr}")
    return json.loads(proc.stdout)["cuda"]["version"] == "13.9.0"


def leftovers(root):
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".manifests-"))


def update(env, url, expect):
    return run(["db", "update", "--mirror", url], env, check_exit=expect)


def install_revision(tmp, env, revision, date=None):
    """Publishes `revision` (with CUDA 13.9) on a fresh mirror and installs it with db update."""
    mirror = tmp / f"mirror-{revision}"
    publish(mirror, revision, date)
    with mirror_server(mirror) as (url, _):
        update(env, url, 0)


@case
def a_newer_database_is_installed_whole_and_used(tmp):
    env = env_for(tmp)
    before = db_json(env)
    check(before["source"] == "compiled-in" and before["revision"] == compiled_in_revision(), f"{before}")
    check(not knows_13_9(env), "the compiled-in database does not know CUDA 13.9")
    revision = newer(1)
    index = publish(tmp / "mirror", revision)
    with mirror_server(tmp / "mirror") as (url, faults):
        proc = update(env, url, 0)
        check(f"from revision {compiled_in_revision()} to {revision}" in proc.stdout, proc.stdout)
        log = faults.parent / (faults.name + ".log")
        fetched = [line.split(" ")[1] for line in log.read_text().splitlines()]
        check(fetched[0] == "/cudaenv/db/index.json", f"the index first: {fetched}")
        check(sorted(fetched[1:]) == sorted(f"/cudaenv/db/{revision}/{f['name']}" for f in index["files"]),
              f"then every file it lists: {fetched}")
        after = db_json(env)
        check(after["revision"] == revision and after["source"] == "downloaded", f"{after}")
        check(after["url"] == f"{url}/cudaenv/db/index.json" and after["updated_at"], f"{after}")
        check(after["date"] == revision[:10] and after["stale"] is False, f"{after}")
        shown = run(["db"], env, check_exit=0).stdout
        check(f"updated from {url}/cudaenv/db/index.json at " in shown, shown)
        check(knows_13_9(env), "resolve sees the release only the new database has")
        manifests = tmp / "root" / "manifests"
        for entry in index["files"]:
            data = (manifests / entry["name"]).read_bytes()
            check(hashlib.sha256(data).hexdigest() == entry["sha256"], f"{entry['name']} installed as listed")
        check(leftovers(tmp / "root") == [], f"no staging left behind: {leftovers(tmp / 'root')}")

        record = (manifests / "database.json").read_bytes()
        again = update(env, url, 0)
        check("up to date" in again.stdout and "nothing changed" in again.stdout, again.stdout)
        check((manifests / "database.json").read_bytes() == record, "the same revision changes nothing")


@case
def a_file_that_does_not_match_its_sha256_is_refused_and_the_old_database_kept(tmp):
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))
    installed = {p.name: p.read_bytes() for p in (tmp / "root" / "manifests").iterdir()}
    # The second database's frameworks.toml arrives with one byte flipped on the way.
    publish(tmp / "mirror", newer(2))
    with mirror_server(tmp / "mirror", {f"/cudaenv/db/{newer(2)}/frameworks.toml": {"corrupt_at": 500}}) as (url, _):
        proc = update(env, url, None)
        expect_error(proc, 6, "sha256 mismatch", "frameworks.toml")
        check("database in use is unchanged" in proc.stderr, proc.stderr)
    check({p.name: p.read_bytes() for p in (tmp / "root" / "manifests").iterdir()} == installed,
          "the installed database is byte for byte the old one")
    check(leftovers(tmp / "root") == [], f"no staging left behind: {leftovers(tmp / 'root')}")

    # The same when the index itself lists a wrong digest.
    index_path = tmp / "mirror" / "cudaenv" / "db" / "index.json"
    index = json.loads(index_path.read_text())
    index["files"][0]["sha256"] = "0" * 64
    index_path.write_text(json.dumps(index))
    with mirror_server(tmp / "mirror") as (url, _):
        expect_error(update(env, url, None), 6, "sha256 mismatch", index["files"][0]["name"])
    check(db_json(env)["revision"] == newer(1), "the old revision is still in use")
    check(knows_13_9(env), "and still answers resolve")


@case
def truncated_oversized_and_garbled_databases_are_refused(tmp):
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))
    truncated = lambda name, data: data[:len(data) // 2] if name == "cuda.toml" else data  # noqa: E731
    publish(tmp / "truncated", newer(2), edit=truncated)
    with mirror_server(tmp / "truncated") as (url, _):
        expect_error(update(env, url, None), 6, "cuda.toml")

    publish(tmp / "oversized", newer(3))
    with mirror_server(tmp / "oversized", {f"/cudaenv/db/{newer(3)}/drivers.toml": {"extra": 5000}}) as (url, _):
        expect_error(update(env, url, None), 6, "drivers.toml")

    # Garbled but listed with its own digest: it matches, yet does not parse.
    garbled = tmp / "garbled"
    publish(garbled, newer(4))
    bad = garbled / "cudaenv" / "db" / newer(4) / "drivers.toml"
    bad.write_text(bad.read_text() + '\n[[branch]]\nbranch = "not a number"\n')
    index = json.loads((garbled / "cudaenv" / "db" / "index.json").read_text())
    for entry in index["files"]:
        if entry["name"] == "drivers.toml":
            entry["sha256"] = hashlib.sha256(bad.read_bytes()).hexdigest()
            entry["size"] = bad.stat().st_size
    (garbled / "cudaenv" / "db" / "index.json").write_text(json.dumps(index))
    with mirror_server(garbled) as (url, _):
        expect_error(update(env, url, None), 6, "does not load", "drivers.toml", "branch")

    # An index that is not JSON, and one that names a file outside its directory.
    (garbled / "cudaenv" / "db" / "index.json").write_text('{"format": 1, "revision": ')
    with mirror_server(garbled) as (url, _):
        expect_error(update(env, url, None), 6, "index.json", "not valid JSON")
    index["files"][0]["name"] = "../../escape.toml"
    (garbled / "cudaenv" / "db" / "index.json").write_text(json.dumps(index))
    with mirror_server(garbled) as (url, _):
        expect_error(update(env, url, None), 6, "files[0].name is malformed")

    check(db_json(env)["revision"] == newer(1), "every refusal kept the old database")
    check(knows_13_9(env), "which still answers resolve")
    check(not (tmp / "escape.toml").exists() and not (tmp / "root" / "escape.toml").exists(), "nothing escaped")
    check(leftovers(tmp / "root") == [], f"no staging left behind: {leftovers(tmp / 'root')}")


def installed_files(tmp):
    return {p.name: p.read_bytes() for p in (tmp / "root" / "manifests").iterdir()}


@case
def revisions_and_dates_that_would_freeze_updates_are_refused(tmp):
    """A revision ranks databases: one from the far future, or with a serial no real revision
    reaches, would rank above every later database and stop all updates. Each is refused (exit 6,
    naming the index's URL and the field) and the installed database stays byte for byte."""
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))
    installed = installed_files(tmp)
    ahead = (utc_today() + datetime.timedelta(days=3)).isoformat()
    refused = [
        # (revision, date, field, words of the error)
        (f"{compiled_in_revision()}.99999", None, "revision", "is not a database revision"),
        ("99999999", "2026-01-01", "revision", "is not a database revision"),
        ("2026-11-30-evil", None, "revision", "is not a database revision"),
        (f"{ahead}.1", ahead, "date", "more than a day in the future"),
        ("2099-12-31", "2099-12-31", "date", "more than a day in the future"),
        ("2099-12-31", compiled_in_revision()[:10], "revision", "more than a day in the future"),
        (newer(2), "2026-13-01", "date", "is not a date"),
        (newer(2), ahead, "date", "later than the day its revision"),
    ]
    for number, (revision, date, field, words) in enumerate(refused):
        mirror = tmp / f"mirror-{number}"
        publish(mirror, revision, date)
        with mirror_server(mirror) as (url, _):
            proc = update(env, url, None)
        line = expect_error(proc, 6, f"{url}/cudaenv/db/index.json", words)
        check(f": {field}" in line or f" {field} " in line, f"{revision}/{date}: names {field}: {line}")
        check(installed_files(tmp) == installed, f"{revision}/{date}: the installed database is unchanged")
        check(db_json(env)["revision"] == newer(1), f"{revision}/{date}: the old revision is in use")
    check(leftovers(tmp / "root") == [], f"no staging left behind: {leftovers(tmp / 'root')}")
    # A revision within a day ahead (another time zone) is fine, and later ones still install.
    tomorrow = (utc_today() + datetime.timedelta(days=1)).isoformat()
    publish(tmp / "tomorrow", f"{tomorrow}.1")
    with mirror_server(tmp / "tomorrow") as (url, _):
        update(env, url, 0)
    check(db_json(env)["revision"] == f"{tomorrow}.1", "a revision dated tomorrow installs")


@case
def an_older_or_equal_revision_is_not_installed(tmp):
    env = env_for(tmp)
    publish(tmp / "old", "2020-01-01", "2020-01-01")
    with mirror_server(tmp / "old") as (url, _):
        proc = update(env, url, 0)
        check("up to date" in proc.stdout and "offers revision 2020-01-01" in proc.stdout, proc.stdout)
        check("nothing changed" in proc.stdout, proc.stdout)
    check(not (tmp / "root" / "manifests").exists(), "nothing was written")
    check(db_json(env)["source"] == "compiled-in", "the compiled-in database stays in use")

    install_revision(tmp, env, newer(5))
    publish(tmp / "older", newer(4))
    with mirror_server(tmp / "older") as (url, _):
        proc = update(env, url, 0)
        check(f"offers revision {newer(4)}, the one in use is {newer(5)}" in proc.stdout, proc.stdout)
    check(db_json(env)["revision"] == newer(5), "the newer installed database stays")


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@case
def without_the_mirror_every_command_keeps_working(tmp):
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))
    proc = update(env, f"http://127.0.0.1:{closed_port()}", None)
    expect_error(proc, 5, "cannot reach the mirror", "/cudaenv/db/index.json")
    check(f"database in use (revision {newer(1)}) stays" in proc.stderr, proc.stderr)
    check(db_json(env)["revision"] == newer(1), "the installed database is still in use")
    check(knows_13_9(env), "resolve still answers from it")

    # A mirror that publishes no database: not found, and nothing changes either.
    (tmp / "empty").mkdir()
    with mirror_server(tmp / "empty") as (url, _):
        expect_error(update(env, url, None), 3, "publishes no database")
    check((tmp / "root" / "manifests" / "database.json").exists(), "still the installed database")


@case
def an_update_killed_midway_leaves_the_old_database(tmp):
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))
    publish(tmp / "mirror", newer(2))
    stalled = f"/cudaenv/db/{newer(2)}/sources.toml"
    with mirror_server(tmp / "mirror", {stalled: {"stall_after": 10, "stall_seconds": 60}}) as (url, faults):
        log = faults.parent / (faults.name + ".log")
        proc = subprocess.Popen([BINARY, "db", "update", "--mirror", url], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (log.exists() and stalled in log.read_text()):
            time.sleep(0.05)
        check(leftovers(tmp / "root") != [], "the files were being staged beside the database")
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
    check(db_json(env)["revision"] == newer(1), "the killed update left the old database in use")
    with mirror_server(tmp / "mirror") as (url, _):
        update(env, url, 0)
    check(db_json(env)["revision"] == newer(2), "the next update installs it")
    check(leftovers(tmp / "root") == [], f"and clears what the killed one left: {leftovers(tmp / 'root')}")


@case
def mirror_create_publishes_a_database_that_db_update_accepts(tmp):
    toolkit_release(tmp / "upstream", "12.4.1", "12.4.131")
    admin = env_for(tmp, "admin-root")
    with mirror_server(tmp / "upstream") as (url, _):
        run(["mirror", "create", str(tmp / "plain"), "--cuda", "12.4.1", "--components", "cuda_cudart",
             "--mirror", url], admin, check_exit=0)
    # Without an update, the compiled-in database is published, byte for byte.
    index_path = tmp / "plain" / "cudaenv" / "db" / "index.json"
    if not index_path.exists():
        raise AssertionError(f"mirror create published no {index_path}")
    index = json.loads(index_path.read_text())
    check(index["revision"] == compiled_in_revision() and index["format"] == 1, f"{index}")
    check(sorted(f["name"] for f in index["files"]) == sorted(p.name for p in REPO_MANIFESTS.glob("*.toml")),
          f"{index['files']}")
    for entry in index["files"]:
        published = tmp / "plain" / "cudaenv" / "db" / index["revision"] / entry["name"]
        check(published.read_bytes() == (REPO_MANIFESTS / entry["name"]).read_bytes(), entry["name"])
        check(hashlib.sha256(published.read_bytes()).hexdigest() == entry["sha256"], entry["name"])

    # The admin's machine updated from upstream; its offline mirror then carries that database,
    # and a cluster node updates from the mirror directory alone.
    install_revision(tmp, admin, newer(3))
    with mirror_server(tmp / "upstream") as (url, _):
        created = run(["mirror", "create", str(tmp / "offline"), "--cuda", "12.4.1", "--components",
                       "cuda_cudart", "--mirror", url], admin, check_exit=0)
    check(f"published the compatibility database (revision {newer(3)})" in created.stdout, created.stdout)
    node = env_for(tmp, "node-root")
    proc = update(node, f"file://{tmp / 'offline'}", 0)
    check(f"to {newer(3)}" in proc.stdout, proc.stdout)
    check(knows_13_9(node), "the node resolves with the published database")


@case
def resolve_doctor_and_db_note_a_database_older_than_90_days(tmp):
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))  # dated the day its revision names
    fresh = run(["resolve", "--no-detect"], env)
    check("note: the compatibility database" not in fresh.stderr, f"a fresh database gets no note: {fresh.stderr}")
    old_date = (utc_today() - datetime.timedelta(days=200)).isoformat()
    install_revision(tmp, env, newer(2), date=old_date)
    info = db_json(env)
    check(info["date"] == old_date and info["age_days"] == 200 and info["stale"] is True, f"{info}")
    resolved = run(["resolve", "--no-detect"], env)
    check(resolved.returncode in (0, 4), resolved.stderr)
    check(f"note: the compatibility database (revision {newer(2)}) is dated {old_date}, 200 days ago"
          in resolved.stderr and "cudaenv db update" in resolved.stderr, resolved.stderr)
    as_json = run(["resolve", "--no-detect", "--json"], env)
    json.loads(as_json.stdout)  # stdout stays JSON; the note goes to stderr
    check("200 days ago" in as_json.stderr, as_json.stderr)
    doctor = run(["doctor"], env)
    check("Note: the compatibility database" in doctor.stdout and "200 days ago" in doctor.stdout, doctor.stdout)
    notes = json.loads(run(["doctor", "--json"], env).stdout)["notes"]
    check(any("200 days ago" in n for n in notes), f"{notes}")


@case
def a_database_directory_others_can_write_is_refused(tmp):
    env = env_for(tmp)
    install_revision(tmp, env, newer(1))
    manifests = tmp / "root" / "manifests"
    manifests.chmod(0o777)
    expect_error(run(["resolve", "--no-detect"], env), 1, "database directory", str(manifests),
                 "writable by every user")
    manifests.chmod(0o755)
    (manifests / "cuda.toml").chmod(0o666)
    expect_error(run(["db"], env), 1, "database file", "cuda.toml", "writable by every user")
    (manifests / "cuda.toml").chmod(0o644)
    check(knows_13_9(env), "once fixed, the database is used again")


finish()
