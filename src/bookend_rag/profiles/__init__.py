"""Influence profiles: how much each part of the analysed sequence influences the answer.

- :mod:`~bookend_rag.profiles.base`: the protocol every kind implements (:class:`InfluenceProfile`)
  and the versioned JSON header of the stored kinds;
- :mod:`~bookend_rag.profiles.theoretical`: the Cesàro theory of a :class:`~bookend_rag.ModelSpec`;
- :mod:`~bookend_rag.profiles.tabulated`: measured weights per token position or per document slot;
- :mod:`~bookend_rag.profiles.fitted`: primacy, a recency window in tokens and a floor, for trained
  models;
- :mod:`~bookend_rag.profiles.published`: the published curves of Liu et al. 2023 as slot tables;
- :mod:`~bookend_rag.profiles.io`: every reference (name, path, spec, JSON) resolved, files read
  through one cache.

A new kind subclasses :class:`~bookend_rag.profiles.base.StoredProfile` in a module of its own,
registers its ``kind`` in :func:`bookend_rag.profiles.io.profile_from_json` and, to be named as more
than a ``profile`` in ``Placement.explain()``, overrides
:meth:`~bookend_rag.profiles.base.InfluenceProfile.describe`.
"""
