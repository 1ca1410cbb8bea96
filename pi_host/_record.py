"""Plain records: the base of the protocol's classes, without pydantic (issue 36).

Every message, block and event of a run is one of these, so their cost is paid on every start and
every delta. A record is an ordinary object whose ``__dict__`` holds its fields (snake_case
attributes, pi's camelCase names in JSON) followed by any unknown fields, kept so that what a
newer pi wrote survives a round trip.

Fields are declared with annotations, as in a dataclass; :func:`Field` gives a default factory or
an explicit JSON name. The annotations are read once per class, on its first instance, and turned
into checks that both validate and convert (a dict becomes the nested record, a ``type`` tag picks
the block class). Two modes, as pydantic's: *lax* (constructors, :meth:`Record.model_validate`)
also takes a number written as text or an integral float for an integer; *strict* (stored
sessions) takes exactly the JSON types. A value that fits neither raises :class:`RecordError`,
whose :meth:`~RecordError.errors` say where, in pydantic's shape (``loc``, ``type``, ``input``).

The pydantic-style methods (``model_validate``, ``model_dump``, ``model_copy``, ``model_fields``,
``model_extra``, ``model_dump_json``) stay, for plugins and extensions written against them.
"""

from __future__ import annotations

import copy as _copy
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, ClassVar

_MISSING: Any = object()


def to_camel(name: str) -> str:
    """``tool_call_id`` -> ``toolCallId`` (pi's JSON names)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class FieldInfo:
    """One declared field: its JSON name and its default (a value or a factory)."""

    __slots__ = ("name", "alias", "default", "default_factory", "annotation")

    def __init__(
        self,
        default: Any = _MISSING,
        default_factory: Callable[[], Any] | None = None,
        alias: str | None = None,
    ) -> None:
        self.name = ""
        self.alias = alias
        self.default = default
        self.default_factory = default_factory
        self.annotation: Any = None

    @property
    def required(self) -> bool:
        return self.default is _MISSING and self.default_factory is None

    def __repr__(self) -> str:
        return f"FieldInfo(name={self.name!r}, alias={self.alias!r})"


def Field(
    default: Any = _MISSING,
    *,
    default_factory: Callable[[], Any] | None = None,  # noqa: N802
    alias: str | None = None,
) -> Any:
    """A field's default factory or JSON name, where a plain default is not enough."""
    return FieldInfo(default, default_factory, alias)


def _own_field_info(declared: Any) -> Any:
    """A pydantic ``Field(...)`` (subclasses written for pi-host's earlier, pydantic-based
    protocol) read as this module's :class:`FieldInfo`; anything else unchanged."""
    if type(declared).__module__ != "pydantic.fields":
        return declared
    default = declared.default
    if type(default).__name__ == "PydanticUndefinedType":
        default = _MISSING
    return FieldInfo(default, declared.default_factory, declared.alias)


class RecordError(ValueError):
    """Input that does not fit a record. ``errors()`` lists each problem as pydantic does: ``loc``
    (the path of keys and indexes), ``type`` (``missing``, ``string_type``...), ``msg``, ``input``."""

    def __init__(self, title: str, problems: list[dict[str, Any]]) -> None:
        self.title = title
        self.problems = problems
        first = problems[0] if problems else {"loc": (), "msg": "invalid"}
        where = ".".join(str(part) for part in first["loc"]) or "value"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{title}: {where}: {first['msg']}{more}")

    def errors(self, include_url: bool = True) -> list[dict[str, Any]]:  # noqa: ARG002 (pydantic's signature)
        return [dict(problem) for problem in self.problems]


class _Fail(Exception):
    """Raised by a check: problems with locations relative to the checked value."""

    def __init__(self, problems: list[dict[str, Any]]) -> None:
        self.problems = problems


def _fail(kind: str, msg: str, value: Any, loc: tuple[Any, ...] = ()) -> _Fail:
    return _Fail([{"loc": loc, "type": kind, "msg": msg, "input": value}])


Check = Callable[[Any, bool], Any]
"""``check(value, strict)`` -> the value to store; raises :class:`_Fail`."""


# --- checks of JSON types ---------------------------------------------------------------------------


def _check_str(value: Any, strict: bool) -> Any:
    if isinstance(value, str):
        return value
    raise _fail("string_type", "Input should be a valid string", value)


def _check_int(value: Any, strict: bool) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not strict:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
    raise _fail("int_type", "Input should be a valid integer", value)


def _check_float(value: Any, strict: bool) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value  # an int stays an int: ``0`` written by pi is written back as ``0``
    if not strict and isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            pass
        else:
            return int(number) if number.is_integer() and "." not in value else number
    raise _fail("float_type", "Input should be a valid number", value)


_TRUE = frozenset({1, "1", "true", "True", "yes", "on"})
_FALSE = frozenset({0, "0", "false", "False", "no", "off"})


def _check_bool(value: Any, strict: bool) -> Any:
    if isinstance(value, bool):
        return value
    if not strict and isinstance(value, (int, str)):
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
    raise _fail("bool_type", "Input should be a valid boolean", value)


def _check_none(value: Any, strict: bool) -> Any:
    if value is None:
        return None
    raise _fail("none_required", "Input should be None", value)


def _check_any(value: Any, strict: bool) -> Any:
    return value


_SCALARS: dict[Any, Check] = {
    str: _check_str,
    int: _check_int,
    float: _check_float,
    bool: _check_bool,
    type(None): _check_none,
    None: _check_none,
    Any: _check_any,
    object: _check_any,
}


def _literal(allowed: tuple[Any, ...]) -> Check:
    def check(value: Any, strict: bool) -> Any:
        if any(value == option and type(value) is type(option) for option in allowed):
            return value
        expected = " or ".join(repr(option) for option in allowed)
        raise _fail("literal_error", f"Input should be {expected}", value)

    return check


def _list(item: Check) -> Check:
    def check(value: Any, strict: bool) -> Any:
        if not isinstance(value, list) and (strict or not isinstance(value, tuple)):
            raise _fail("list_type", "Input should be a valid list", value)
        if item is _check_any:
            return list(value)
        out, problems = [], []
        for index, element in enumerate(value):
            try:
                out.append(item(element, strict))
            except _Fail as failed:
                problems += [{**p, "loc": (index, *p["loc"])} for p in failed.problems]
        if problems:
            raise _Fail(problems)
        return out

    return check


def _dict(item: Check) -> Check:
    def check(value: Any, strict: bool) -> Any:
        if not isinstance(value, dict):
            raise _fail("dict_type", "Input should be a valid dictionary", value)
        if item is _check_any:
            return value
        out, problems = {}, []
        for key, element in value.items():
            try:
                out[key] = item(element, strict)
            except _Fail as failed:
                problems += [{**p, "loc": (key, *p["loc"])} for p in failed.problems]
        if problems:
            raise _Fail(problems)
        return out

    return check


def _nested(cls: type[Record]) -> Check:
    def check(value: Any, strict: bool) -> Any:
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls._from_dict(value, strict)
        raise _fail("model_type", f"Input should be a valid dictionary or instance of {cls.__name__}", value)

    return check


def _tag_of(cls: type) -> Any:
    """The constant ``type`` of a record class (its ``Literal`` default), or _MISSING."""
    if isinstance(cls, type) and issubclass(cls, Record):
        info = cls.model_fields.get("type")
        if info is not None and isinstance(info.default, str):
            return info.default
    return _MISSING


def _tagged(members: tuple[type[Record], ...]) -> Check:
    """A union of records told apart by their ``type`` (pi's content blocks)."""
    by_tag = {_tag_of(cls): cls for cls in members}
    expected = ", ".join(repr(tag) for tag in by_tag)

    def check(value: Any, strict: bool) -> Any:
        if isinstance(value, members):
            return value
        if not isinstance(value, dict):
            raise _fail("model_attributes_type", "Input should be a valid dictionary", value)
        tag = value.get("type", _MISSING)
        cls = by_tag.get(tag) if isinstance(tag, str) else None
        if cls is None:
            if tag is _MISSING:
                raise _fail("union_tag_not_found", "Unable to extract tag using discriminator 'type'", value)
            raise _fail(
                "union_tag_invalid",
                f"Input tag {tag!r} found using 'type' does not match any of the expected tags: {expected}",
                value,
            )
        return cls._from_dict(value, strict)

    return check


def _union(members: tuple[Check, ...]) -> Check:
    """Try each member strictly first (so ``1`` stays an int in ``int | str``), then laxly."""

    def check(value: Any, strict: bool) -> Any:
        problems: list[dict[str, Any]] = []
        for mode in (True,) if strict else (True, False):
            problems = []
            for member in members:
                try:
                    return member(value, mode)
                except _Fail as failed:
                    problems += failed.problems
        raise _Fail(problems)

    return check


def make_check(tp: Any) -> Check:
    """The check of a type annotation (the subset the protocol uses; anything else is taken as is)."""
    scalar = _SCALARS.get(tp) if not isinstance(tp, (list, dict)) else None
    if scalar is not None:
        return scalar
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        return make_check(args[0])
    if origin is typing.Literal:
        return _literal(args)
    if origin is typing.Union or origin is types.UnionType:
        records = [a for a in args if a is not type(None)]
        optional = len(records) < len(args)
        if len(records) > 1 and all(_tag_of(a) is not _MISSING for a in records):
            inner = _tagged(tuple(records))
            return _union((_check_none, inner)) if optional else inner
        return _union(tuple(make_check(a) for a in args))
    if origin is list:
        return _list(make_check(args[0]) if args else _check_any)
    if origin is dict:
        return _dict(make_check(args[1]) if len(args) == 2 else _check_any)
    if isinstance(tp, type) and issubclass(tp, Record):
        return _nested(tp)
    return _check_any


# --- the base class ---------------------------------------------------------------------------------


class Record:
    """Base of every protocol class: camelCase JSON, unknown fields kept, None left out of JSON."""

    model_fields: ClassVar[dict[str, FieldInfo]] = {}
    """``{attribute name: FieldInfo}`` in declaration order (base classes' first)."""
    field_names: ClassVar[dict[str, str]] = {}
    _checks: ClassVar[dict[str, Check] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = {name: _copy.copy(info) for name, info in cls.model_fields.items()}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if name.startswith("_") or "ClassVar" in str(annotation):
                continue
            declared = _own_field_info(cls.__dict__.get(name, _MISSING))
            info = declared if isinstance(declared, FieldInfo) else FieldInfo(declared)
            if isinstance(declared, FieldInfo):
                delattr(cls, name)
            info.name = name
            info.alias = info.alias or to_camel(name)
            info.annotation = annotation
            fields[name] = info
        cls.model_fields = fields
        names = {}
        for name, info in fields.items():
            names[name] = name
            names[info.alias] = name
        cls.field_names = names
        cls._checks = None

    @classmethod
    def _build_checks(cls) -> dict[str, Check]:
        """Each field's check, from its annotation (evaluated in its class's module)."""
        checks: dict[str, Check] = {}
        owners = {
            name: owner
            for owner in reversed(cls.__mro__)
            for name in owner.__dict__.get("__annotations__", {})
        }
        namespaces: dict[str, dict[str, Any]] = {}
        for name, info in cls.model_fields.items():
            annotation = info.annotation
            if isinstance(annotation, str):
                module_name = owners.get(name, cls).__module__
                namespace = namespaces.get(module_name)
                if namespace is None:
                    module = sys.modules.get(module_name)
                    namespace = namespaces[module_name] = {
                        **typing.__dict__,
                        **(vars(module) if module else {}),
                    }
                try:
                    annotation = eval(annotation, namespace)  # noqa: S307 (the class's own annotation text)
                except (NameError, SyntaxError, TypeError):  # e.g. a name imported only for type checkers
                    annotation = Any
            checks[name] = make_check(annotation)
        cls._checks = checks
        return checks

    def __init__(self, /, **data: Any) -> None:
        try:
            self._fill(data, False)
        except _Fail as failed:
            raise RecordError(type(self).__name__, failed.problems) from None

    def _fill(self, data: dict[str, Any], strict: bool) -> None:
        cls = type(self)
        checks = cls._checks or cls._build_checks()
        names = cls.field_names
        given: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in data.items():
            name = names.get(key)
            if name is None:
                extra[key] = value
            elif name not in given or key == name:
                given[name] = value
        values = self.__dict__
        problems: list[dict[str, Any]] = []
        for name, info in cls.model_fields.items():
            if name in given:
                try:
                    values[name] = checks[name](given[name], strict)
                except _Fail as failed:
                    problems += [{**p, "loc": (info.alias, *p["loc"])} for p in failed.problems]
            elif info.default is not _MISSING:
                values[name] = info.default
            elif info.default_factory is not None:
                values[name] = info.default_factory()
            else:
                problems.append(
                    {"loc": (info.alias,), "type": "missing", "msg": "Field required", "input": data}
                )
        if problems:
            raise _Fail(problems)
        values.update(extra)

    @classmethod
    def _from_dict(cls, data: dict[str, Any], strict: bool) -> Any:
        record = cls.__new__(cls)
        cls._fill(record, data, strict)
        return record

    @classmethod
    def model_validate(cls, obj: Any, *, strict: bool | None = None) -> Any:
        """A record from its JSON dict (camelCase or snake_case keys); raises :class:`RecordError`."""
        if isinstance(obj, cls):
            return obj
        try:
            if not isinstance(obj, dict):
                raise _fail(
                    "model_type", f"Input should be a valid dictionary or instance of {cls.__name__}", obj
                )
            return cls._from_dict(obj, bool(strict))
        except _Fail as failed:
            raise RecordError(cls.__name__, failed.problems) from None

    @classmethod
    def model_validate_json(cls, text: str | bytes, *, strict: bool | None = None) -> Any:
        import json

        return cls.model_validate(json.loads(text), strict=strict)

    # --- reading -------------------------------------------------------------------------------

    @property
    def model_extra(self) -> dict[str, Any]:
        """The unknown fields, under the names they came with."""
        return dict(self._extra_items())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  (mutable, as pydantic's models)

    def __iter__(self) -> Any:
        values = self.__dict__
        fields = [(name, values[name]) for name in type(self).model_fields if name in values]
        return iter(fields + self._extra_items())

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self)
        return f"{type(self).__name__}({inner})"

    # --- writing -------------------------------------------------------------------------------

    def _extra_items(self) -> list[tuple[str, Any]]:
        """The unknown fields, in the order they were set (names starting with ``_`` left out)."""
        values = self.__dict__
        fields = type(self).model_fields
        if len(values) == len(fields):  # the usual case: every field, nothing else
            return []
        return [(k, v) for k, v in values.items() if k not in fields and k[:1] != "_"]

    def to_json(self, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
        """The JSON-ready dict pi would write (absent optional fields are left out), fields in
        declaration order, then the unknown ones; ``skip`` names fields to leave out too."""
        values = self.__dict__
        out: dict[str, Any] = {}
        for name, info in type(self).model_fields.items():
            value = values.get(name)
            if value is not None and name not in skip:
                out[info.alias] = json_value(value)
        for key, value in self._extra_items():
            if value is not None:
                out[key] = json_value(value)
        return out

    def model_dump(
        self,
        *,
        mode: str = "python",
        by_alias: bool = False,
        exclude_none: bool = False,
        exclude: set[str] | None = None,
        **_ignored: Any,
    ) -> dict[str, Any]:
        """pydantic's ``model_dump``: attribute or JSON names, None kept unless excluded."""
        if mode == "json" and by_alias and exclude_none and not exclude:
            return self.to_json()
        values = self.__dict__
        items = [
            (info.alias if by_alias else name, name, values.get(name))
            for name, info in type(self).model_fields.items()
            if name in values
        ]
        items += [(key, key, value) for key, value in self._extra_items()]
        out: dict[str, Any] = {}
        for out_name, name, value in items:
            if (exclude and name in exclude) or (exclude_none and value is None):
                continue
            out[out_name] = _dump(value, mode == "json", by_alias, exclude_none)
        return out

    def model_dump_json(self, **kwargs: Any) -> str:
        import json

        kwargs.pop("mode", None)
        return json.dumps(self.model_dump(mode="json", **kwargs), ensure_ascii=False, separators=(",", ":"))

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy (shallow unless ``deep``) with ``update``'s fields replaced, unchecked."""
        cls = type(self)
        new = cls.__new__(cls)
        values = _copy.deepcopy(self.__dict__) if deep else dict(self.__dict__)
        if update:
            names = cls.field_names
            for key, value in update.items():
                values[names.get(key, key)] = value
        new.__dict__.update(values)
        return new


def json_value(value: Any) -> Any:
    """A field value as JSON data (records by their JSON names; tuples as lists)."""
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, list):
        return [json_value(v) for v in value] if value and _needs_copy(value) else list(value)
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()} if _needs_copy(value.values()) else dict(value)
    return value


def _needs_copy(values: Any) -> bool:
    return any(isinstance(v, (Record, list, tuple, dict)) for v in values)


def _dump(value: Any, json_mode: bool, by_alias: bool, exclude_none: bool) -> Any:
    if isinstance(value, Record):
        return value.model_dump(
            mode="json" if json_mode else "python", by_alias=by_alias, exclude_none=exclude_none
        )
    if isinstance(value, list) or (json_mode and isinstance(value, tuple)):
        return [_dump(v, json_mode, by_alias, exclude_none) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v, json_mode, by_alias, exclude_none) for k, v in value.items()}
    return value
