"""The sections of the report page, one module per section; each section function takes the page
builder and the report context and returns its HTML body ("" leaves the section out)."""
