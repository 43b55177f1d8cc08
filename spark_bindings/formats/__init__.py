"""What a format's Spark decoder cannot build from the format's tables, one module per format.

A module here is named in the format's registry entry (``contracts.formats.FORMATS``,
``spark="<module>"``) and defines ``Decoder``: a subclass of
:class:`spark_bindings.build.SpecDecoder` overriding only the expressions the tables cannot say.
It states no fact of its own (op codes, flags, positions...): those come from the core format.
"""
