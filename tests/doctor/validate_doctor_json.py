#!/usr/bin/env python3
"""Validates a JSON document against a JSON Schema (draft 2020-12).

Usage: validate_doctor_json.py SCHEMA DOCUMENT
Exit 0 when it validates, 1 with one line per error when it does not, 77 when python3-jsonschema
is not installed (the caller skips).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed")
    sys.exit(77)

with open(sys.argv[1]) as f:
    schema = json.load(f)
with open(sys.argv[2]) as f:
    document = json.load(f)
jsonschema.Draft202012Validator.check_schema(schema)
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document))
for error in errors:
    print(f"{error.json_path}: {error.message}")
sys.exit(1 if errors else 0)
