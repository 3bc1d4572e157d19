-- lists by tool, newest first, without reading every call (the API's ?tool=)
CREATE INDEX calls_by_tool ON calls (tool_name, position);
