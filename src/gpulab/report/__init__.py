"""Everything shown to a person: terminal tables, the bench summary, plots and the README tables.
All of it is built from records (the CSV's rows), never from parsing printed text."""
