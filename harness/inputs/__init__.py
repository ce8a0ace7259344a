"""Reading what a user hands the harness, as the field's own tools read it and failing
closed: SQL tokenised as the server tokenises it (``sqlread``: comments, quotes,
delimiters, executable comments per version), and input files opened as regular files,
never through a link, within a size budget (``inputfile``)."""
