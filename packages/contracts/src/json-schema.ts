/** A JSON Schema object, as a tool's `input` or `output`. */
export type JsonSchema = { [key: string]: unknown };
