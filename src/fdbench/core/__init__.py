"""What every stage stands on: errors, atomic checksummed I/O, provenance, the job runner and the
import of user callables. Imports nothing else of fdbench."""
