// The bridge's `typebox/value`: Check, Errors, Default, Clean, Clone and Parse over plain JSON
// Schema (the keywords tool parameters use), for extensions that validate their own data.

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function typeMatches(expected, value) {
  const actual = typeOf(value);
  if (expected === "number") return actual === "number" || actual === "integer";
  return expected === actual;
}

function* check(schema, value, path) {
  if (schema === true || schema === undefined) return;
  if (schema === false) {
    yield { path, message: "no value is allowed here" };
    return;
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) {
      yield { path, message: `expected ${types.join(" or ")}, got ${typeOf(value)}` };
      return;
    }
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    yield { path, message: `expected ${JSON.stringify(schema.const)}` };
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((v) => JSON.stringify(v) === JSON.stringify(value))) {
    yield { path, message: `expected one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}` };
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength) yield { path, message: `shorter than ${schema.minLength}` };
    if (schema.maxLength !== undefined && value.length > schema.maxLength) yield { path, message: `longer than ${schema.maxLength}` };
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value)) yield { path, message: `does not match ${schema.pattern}` };
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) yield { path, message: `less than ${schema.minimum}` };
    if (schema.maximum !== undefined && value > schema.maximum) yield { path, message: `greater than ${schema.maximum}` };
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) yield { path, message: `not above ${schema.exclusiveMinimum}` };
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) yield { path, message: `not below ${schema.exclusiveMaximum}` };
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) yield { path, message: `fewer than ${schema.minItems} items` };
    if (schema.maxItems !== undefined && value.length > schema.maxItems) yield { path, message: `more than ${schema.maxItems} items` };
    const prefix = schema.prefixItems ?? [];
    for (let index = 0; index < value.length; index++) {
      const itemSchema = index < prefix.length ? prefix[index] : schema.items;
      yield* check(itemSchema, value[index], `${path}/${index}`);
    }
  }
  if (typeOf(value) === "object") {
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) {
      if (!(name in value)) yield { path: `${path}/${name}`, message: "missing" };
    }
    for (const [name, item] of Object.entries(value)) {
      if (name in properties) yield* check(properties[name], item, `${path}/${name}`);
      else if (schema.additionalProperties !== undefined) yield* check(schema.additionalProperties, item, `${path}/${name}`);
    }
  }
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) yield* check(part, value, path);
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((part) => check(part, value, path).next().done)) {
    yield { path, message: "matches none of the allowed shapes" };
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.filter((part) => check(part, value, path).next().done).length !== 1) {
    yield { path, message: "does not match exactly one allowed shape" };
  }
  if (schema.not !== undefined && check(schema.not, value, path).next().done) {
    yield { path, message: "matches a forbidden shape" };
  }
}

export function Check(schema, value) {
  return check(schema, value, "").next().done;
}

export function Errors(schema, value) {
  return [...check(schema, value, "")].map((error) => ({ ...error, instancePath: error.path, value }));
}

export function Clone(value) {
  return structuredClone(value);
}

export function Default(schema, value) {
  if (value === undefined && schema && "default" in schema) return structuredClone(schema.default);
  if (typeOf(value) === "object" && schema?.properties) {
    for (const [name, item] of Object.entries(schema.properties)) {
      const filled = Default(item, value[name]);
      if (filled !== undefined) value[name] = filled;
    }
  }
  return value;
}

export function Clean(schema, value) {
  if (typeOf(value) === "object" && schema?.properties && schema.additionalProperties === undefined) {
    for (const name of Object.keys(value)) {
      if (!(name in schema.properties)) delete value[name];
      else Clean(schema.properties[name], value[name]);
    }
  }
  return value;
}

export function Convert(_schema, value) {
  return value;
}

export function Parse(schema, value) {
  const errors = Errors(schema, value);
  if (errors.length) throw new Error(errors.map((e) => `${e.path || "/"}: ${e.message}`).join("; "));
  return value;
}

export const Value = { Check, Errors, Clone, Default, Clean, Convert, Parse };
export default Value;
