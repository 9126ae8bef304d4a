"""Influence profiles: how much each part of the analysed sequence influences the answer.

- :mod:`~bookend.profiles.base`: the protocol every kind implements (:class:`InfluenceProfile`)
  and the versioned JSON header of the stored kinds;
- :mod:`~bookend.profiles.theory`: the Cesàro theory of a :class:`~bookend.ModelSpec`;
- :mod:`~bookend.profiles.tabulated`: measured weights per token position or per document slot;
- :mod:`~bookend.profiles.fitted`: primacy, a recency window in tokens and a floor, for trained
  models;
- :mod:`~bookend.profiles.published`: the published curves of Liu et al. 2023 as slot tables;
- :mod:`~bookend.profiles.io`: every reference (name, path, spec, JSON) resolved, files read
  through one cache.

A new kind subclasses :class:`~bookend.profiles.base.StoredProfile` in a module of its own and
registers its ``kind`` in :func:`bookend.profiles.io.profile_from_json`.
"""
