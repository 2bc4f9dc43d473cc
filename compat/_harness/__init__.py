"""Private implementation of ``compat.harness``.

Modules:

- ``streams``   normalised fetched values (``Stream``), elements and their comparison keys
- ``runner``    runs one side of a comparison in isolation; re-exports ``_tf_binding`` (binding a
                pipeline function to a ``tf`` module) and ``_graph_facts`` (``inspect_graph``,
                ``PipelineFacts``)
- ``levels``    the comparison levels ``exact``, ``epochs``, ``window``, ``stats``, re-exported
                from ``_element_levels`` (exact, epochs), ``_displacement_levels`` (window,
                stats) and ``_element_matching`` (``snap``)
- ``report``    frozen result types, ``explain()`` text and JSON
- ``compare``   orchestration and ``auto`` mode
- ``golden``    recording and replaying golden streams
- ``pipelines`` generated pipeline configurations turned into ``build(tf)`` functions
- ``plot``      optional matplotlib figure

Only ``streams``, ``levels``, ``report`` and ``pipelines``' config types work without TensorFlow;
``runner`` (and ``_tf_binding``, ``_graph_facts``) import it inside functions.
"""
