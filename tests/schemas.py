"""jsonschema.validate with the validator built once per schema: jsonschema.validate checks the
schema against its metaschema and builds a new validator on every call, more than half of each
call's time on numastor's documents. Same errors (jsonschema.ValidationError, SchemaError)."""

import jsonschema

_validators = {}


def validate(instance, schema):
    v = _validators.get(id(schema))
    if v is None or v[0] is not schema:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        v = _validators[id(schema)] = (schema, cls(schema))
    v[1].validate(instance)
