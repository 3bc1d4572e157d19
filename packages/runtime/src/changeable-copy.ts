/**
 * A copy of `value` with `changes`, for the runtime to go on changing (a record whose call runs
 * here gains six or so properties: its start, its end, its output...). Not `{ ...value }`: on
 * Node 20's V8, each property added to an object that spread made takes a slow path, about 2 µs
 * against 0.05 for a copy made by `Object.assign` (about 18 of the 70 µs a worker spent per call).
 */
export function changeableCopy<T extends object>(value: T, changes?: Partial<T>): T {
  return Object.assign({}, value, changes);
}
