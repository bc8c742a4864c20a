"""Everything shown to a person: terminal tables, the bench summary, plots and the generated tables
of the README and docs/results/.
All of it is built from records (the CSV's rows), never from parsing printed text."""
