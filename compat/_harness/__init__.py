"""Private implementation of ``compat.harness``.

Modules:

- ``streams``   normalised fetched values (``Stream``), elements and their comparison keys
- ``runner``    runs one side of a comparison in isolation and inspects its graph (``PipelineFacts``)
- ``levels``    the comparison levels ``exact``, ``epochs``, ``window``, ``stats``
- ``report``    frozen result types, ``explain()`` text and JSON
- ``compare``   orchestration and ``auto`` mode
- ``golden``    recording and replaying golden streams
- ``pipelines`` generated pipeline configurations turned into ``build(tf)`` functions
- ``plot``      optional matplotlib figure

Only ``streams``, ``levels``, ``report`` and ``pipelines``' config types work without TensorFlow;
``runner`` imports it inside functions.
"""
