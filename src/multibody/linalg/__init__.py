"""Linear algebra with a mechanical meaning but no model in it: rank decisions (:mod:`.rank`, paper 000
Sect. 2.5), tangent bases (:mod:`.tangent`), projectors (:mod:`.projectors`, paper 002), sparse
factorisations (:mod:`.sparse`) and rotations (:mod:`.rotations`)."""
