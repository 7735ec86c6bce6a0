"""jsonschema.validate with the validator built once per schema: jsonschema.validate checks the
schema against its metaschema and builds a new validator on every call, more than half of each
call's time on numastor's documents. Same errors (jsonschema.ValidationError, SchemaError)."""

import jsonschema

_validators = {}


def validate(instance, schema):
    key = id(schema)
    if key not in _validators:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        # the schema is kept with its validator, so its id cannot pass to another object
        _validators[key] = (schema, cls(schema))
    _validators[key][1].validate(instance)
