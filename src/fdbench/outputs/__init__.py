"""The outputs store: schema, readers, writers and importers of other tools' formats."""
