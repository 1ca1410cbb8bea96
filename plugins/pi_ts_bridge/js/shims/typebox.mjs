// The bridge's `typebox`: TypeBox's schema builders, producing plain JSON Schema.
//
// pi validates tool arguments as JSON Schema whatever built the schema, and so does pi-host;
// what an extension needs from TypeBox is the builders. Optional properties are marked with a
// symbol (never serialised) so Type.Object can compute `required`, as TypeBox does.

const OPTIONAL = Symbol.for("pi-ts-bridge.optional");
const READONLY = Symbol.for("pi-ts-bridge.readonly");

function schema(base, options) {
  return { ...(options ?? {}), ...base };
}

function mark(target, symbol) {
  const copy = { ...target };
  for (const key of Object.getOwnPropertySymbols(target)) copy[key] = target[key];
  Object.defineProperty(copy, symbol, { value: true, enumerable: false });
  return copy;
}

function isOptional(value) {
  return Boolean(value && value[OPTIONAL]);
}

function objectOf(properties, options) {
  const required = Object.keys(properties).filter((key) => !isOptional(properties[key]));
  const base = { type: "object", properties };
  if (required.length) base.required = required;
  return schema(base, options);
}

function literalType(value) {
  if (typeof value === "number") return Number.isInteger(value) ? "number" : "number";
  return typeof value === "boolean" ? "boolean" : "string";
}

export const Type = {
  Object: objectOf,
  String: (options) => schema({ type: "string" }, options),
  Number: (options) => schema({ type: "number" }, options),
  Integer: (options) => schema({ type: "integer" }, options),
  Boolean: (options) => schema({ type: "boolean" }, options),
  Null: (options) => schema({ type: "null" }, options),
  Any: (options) => schema({}, options),
  Unknown: (options) => schema({}, options),
  Never: (options) => schema({ not: {} }, options),
  // JSON has no such values: these reject every argument, as pi documents
  Undefined: (options) => schema({ not: {} }, options),
  Void: (options) => schema({ not: {} }, options),
  BigInt: (options) => schema({ not: {} }, options),
  Date: (options) => schema({ type: "string", format: "date-time" }, options),
  Array: (items, options) => schema({ type: "array", items }, options),
  Tuple: (items, options) =>
    schema({ type: "array", prefixItems: items, items: false, minItems: items.length, maxItems: items.length }, options),
  Optional: (value, flag = true) => (flag ? mark(value, OPTIONAL) : { ...value }),
  Readonly: (value) => mark(value, READONLY),
  ReadonlyOptional: (value) => mark(mark(value, READONLY), OPTIONAL),
  Union: (anyOf, options) => schema({ anyOf }, options),
  Intersect: (allOf, options) => schema({ allOf }, options),
  Not: (value, options) => schema({ not: value }, options),
  Literal: (value, options) => schema({ type: literalType(value), const: value }, options),
  Enum: (values, options) => {
    const list = Array.isArray(values)
      ? values
      : Object.entries(values)
          .filter(([key]) => Number.isNaN(Number(key))) // numeric enums map names back too
          .map(([, value]) => value);
    return schema({ anyOf: list.map((value) => ({ type: literalType(value), const: value })) }, options);
  },
  Record: (key, value, options) => {
    const base = { type: "object", additionalProperties: value };
    if (key && key.pattern) base.patternProperties = { [key.pattern]: value };
    return schema(base, options);
  },
  Partial: (object, options) => {
    const properties = {};
    for (const [name, value] of Object.entries(object.properties ?? {})) properties[name] = mark(value, OPTIONAL);
    const { required: _required, ...rest } = object;
    return schema({ ...rest, properties }, options);
  },
  Required: (object, options) =>
    schema({ ...object, required: Object.keys(object.properties ?? {}) }, options),
  Pick: (object, keys, options) => {
    const names = Array.isArray(keys) ? keys : keys.const !== undefined ? [keys.const] : [];
    const properties = Object.fromEntries(names.filter((k) => k in (object.properties ?? {})).map((k) => [k, object.properties[k]]));
    return objectOf(properties, options);
  },
  Omit: (object, keys, options) => {
    const names = new Set(Array.isArray(keys) ? keys : [keys.const]);
    const properties = Object.fromEntries(Object.entries(object.properties ?? {}).filter(([k]) => !names.has(k)));
    return objectOf(properties, options);
  },
  Composite: (objects, options) => {
    const properties = {};
    for (const object of objects) Object.assign(properties, object.properties ?? {});
    return objectOf(properties, options);
  },
  KeyOf: (object, options) =>
    schema({ anyOf: Object.keys(object.properties ?? {}).map((key) => ({ type: "string", const: key })) }, options),
  Unsafe: (value) => ({ ...value }),
  Ref: (id, options) => schema({ $ref: typeof id === "string" ? id : `#/$defs/${id.$id}` }, options),
  Recursive: (build, options) => {
    const self = { $ref: "#" };
    return schema(build(self), options);
  },
  RegExp: (pattern, options) => schema({ type: "string", pattern: String(pattern.source ?? pattern) }, options),
  TemplateLiteral: (_parts, options) => schema({ type: "string" }, options),
};

// Names TypeBox exports as types only: values here so an import without `type` still links.
export let Static;
export let TSchema;
export let TObject;
export let TString;
export let TNumber;
export let TProperties;

export const Kind = Symbol.for("TypeBox.Kind");
export const OptionalKind = OPTIONAL;
export const ReadonlyKind = READONLY;
export default Type;
