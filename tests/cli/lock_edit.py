"""Reading a .cudaenv.lock into a dict and writing one back from a dict, for tests that hand
cudaenv a lock a hostile repository could carry: tomllib reads it; `dump` writes the same shapes
(tables, arrays of tables, strings, integers, lists of strings) as TOML."""

import json
import tomllib


def load(path):
    return tomllib.loads(path.read_text())


def _value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _is_tables(value):
    return isinstance(value, list) and value and all(isinstance(v, dict) for v in value)


def _table(name, table, out):
    plain = {k: v for k, v in table.items() if not isinstance(v, dict) and not _is_tables(v)}
    if name and (plain or not table):
        out.append(f"[{name}]")
    for key, value in plain.items():
        out.append(f"{json.dumps(key)} = {_value(value)}")
    for key, value in table.items():
        path = f"{name}.{json.dumps(key)}" if name else json.dumps(key)
        if isinstance(value, dict):
            _table(path, value, out)
        elif _is_tables(value):
            for item in value:
                out.append(f"[[{path}]]")
                sub = []
                _table("", {k: v for k, v in item.items() if not isinstance(v, dict)}, sub)
                out.extend(sub)


def dump(lock):
    out = []
    _table("", lock, out)
    return "\n".join(out) + "\n"


def save(path, lock):
    path.write_text(dump(lock))
