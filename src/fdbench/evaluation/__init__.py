"""The evaluate stage: stored outputs -> CSFs -> protocol -> metrics -> results rows."""
