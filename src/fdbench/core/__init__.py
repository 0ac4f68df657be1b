"""What every stage stands on: errors, atomic checksummed I/O, provenance, the job runner, the
import of user callables and the one input boundary (validation of arrays and tables, the YAML
loader). Imports nothing else of fdbench."""
