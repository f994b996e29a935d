"""codegen/trees.py: the fast walk visits what ast.walk visits, in its order, and clone makes
a tree that shares no node with the original."""
import ast
import inspect

import gast

from gradlab.codegen import reverse, trees


def _tree() -> gast.AST:
    return gast.parse(inspect.getsource(reverse))


def test_walk_visits_the_nodes_ast_walk_visits_in_the_same_order():
    tree = _tree()
    assert [id(n) for n in trees.walk(tree)] == [id(n) for n in ast.walk(tree)]


def test_clone_is_equal_and_shares_no_node():
    tree = _tree()
    copy = trees.clone(tree)
    assert ast.unparse(gast.gast_to_ast(copy)) == ast.unparse(gast.gast_to_ast(tree))
    originals = {id(n) for n in ast.walk(tree)}
    assert not originals & {id(n) for n in ast.walk(copy)}


def test_clone_of_a_list_and_of_other_values():
    nodes = [gast.Name("x", gast.Load(), None, None), None]
    copied = trees.clone(nodes)
    assert copied[0] is not nodes[0] and copied[0].id == "x" and copied[1] is None
    copied[0].id = "y"
    assert nodes[0].id == "x"
    value = {"a": [1, 2]}
    assert trees.clone(value) == value and trees.clone(value) is not value


def test_outside_inner_loops_stops_at_loops_and_functions() -> None:
    """What belongs to a loop being read: a break inside an inner loop or a nested def is
    that one's own."""
    import gast as _gast
    from gradlab.codegen.trees import outside_inner_loops
    body = _gast.parse("if c:\n    break\nfor j in r:\n    continue\ndef h():\n    return 1\n").body
    kinds = {type(n).__name__ for s in body for n in outside_inner_loops(s)}
    assert "Break" in kinds and "Continue" not in kinds and "Return" not in kinds
