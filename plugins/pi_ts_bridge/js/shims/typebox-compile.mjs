// The bridge's `typebox/compile`: a "compiled" checker is the interpreter of typebox-value.mjs.

import { Check, Errors, Parse } from "./typebox-value.mjs";

export function Compile(schema) {
  return {
    Check: (value) => Check(schema, value),
    Errors: (value) => Errors(schema, value),
    Parse: (value) => Parse(schema, value),
    Decode: (value) => Parse(schema, value),
    Encode: (value) => value,
    Schema: () => schema,
  };
}

export const TypeCompiler = { Compile };
export default Compile;
