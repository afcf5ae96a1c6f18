// cubetower camera mount: a post beside the Amerigo dice-tower tray with an arm that holds a
// Raspberry Pi Camera Module 3 (board 25 x 24 mm, M2 holes 21 x 12.5 mm) looking down at the
// tray. Three printed parts:
//   post  - a square bar; with base = "clip" it ends in a U clip that slides over a wall
//           (the tower's or the tray's side wall), with base = "foot" it is a plain bar.
//           Printed in `post_pieces` pieces ("post" and "post_extension") joined by a
//           "coupler" so every piece fits a 220 mm print bed
//   foot  - a flat foot with a socket for the post (only for base = "foot")
//   arm   - slides onto the top of the post, reaches over the tray, holds the camera board
// All sizes in mm. Set `part` and render (F6), then export STL. See mount.md.
// OpenSCAD 2021.01 or newer.

/* [What to render] */
part = "assembly";        // [assembly, post, post_extension, coupler, arm, foot, none]

/* [Camera position] */
camera_height = 250;      // lens above the tray floor (170-320 sensible; 250 = 25 cm)
tilt = 0;                 // degrees the camera leans away from the post (0 = straight down)
reach = 80;               // post centre to camera centre, horizontally

/* [Base] */
base = "clip";            // [clip, foot]
wall_thickness = 2.5;     // the wall the clip grips (Amerigo's tower board is about 2-3 mm)
wall_clearance = 0.4;     // extra gap in the clip; less for a tighter grip
clip_depth = 30;          // how far the clip reaches down the wall
clip_width = 30;          // clip length along the wall
clip_seat_height = 40;    // height of that wall's top edge above the tray floor
tray_floor_above_table = 5; // for base = "foot": the tray floor's height above the table
foot_size = [90, 70];     // foot plate (base = "foot")

/* [Camera board: Raspberry Pi Camera Module 3] */
board = [25, 24];         // board width (across the holes) x height
hole_spacing = [21, 12.5];// M2 hole pattern
hole_inset = 2;           // hole centres from the board's side and top edges
m2_hole = 2.4;            // M2 clearance hole
m2_nut = 4.4;             // M2 nut across flats, plus clearance
nut_depth = 2;            // hex nut trap depth in the plate (an M2 nut is 1.6 mm thick)
standoff = 4;             // gap between plate and board (the back of the board has parts)
board_and_lens = 6;       // board thickness plus the lens below it (approximate)

/* [Structure] */
post = 14;                // square post cross-section
fit = 0.35;               // clearance between post and sockets
socket_depth = 30;        // how far the post goes into the arm, the foot and the coupler
post_pieces = 2;          // the post is printed in this many pieces (1 for a big printer)
arm_w = 16;               // arm width
arm_t = 9;                // arm thickness
plate_t = 4;              // camera plate thickness: nut_depth plus 2 mm of plate under each nut
plate_margin = 3;         // plate beyond the board on each side
plate_drop = 6;           // from the arm's underside to the plate (room for the M2 screw heads)
m3_hole = 3.4;            // M3 cross pin through post and socket

$fn = 40;
eps = 0.01;

// ---- derived -------------------------------------------------------------------------------

base_level = base == "clip" ? clip_seat_height : -tray_floor_above_table;
roof = 4;                                 // closed top of the arm's socket block
drop = arm_t + plate_drop + plate_t + standoff + board_and_lens;  // arm top to lens
arm_top = camera_height + drop;           // height of the arm's top above the tray floor
post_len = arm_top - roof - base_level;   // post from its seat to its top
piece_len = post_len / post_pieces;       // each printed piece of the post
plate = [board[0] + 2 * plate_margin, board[1] + 2 * plate_margin];
sock = post + 2 * fit;
block = sock + 2 * 4;                     // socket block outside size

echo(str("cubetower mount: post length ", post_len, " mm in ", post_pieces, " pieces of ",
         piece_len, " mm; arm top ", arm_top, " mm above the tray floor; lens at ",
         camera_height, " mm"));
assert(camera_height >= 150 && camera_height <= 400, "camera_height: 150-400 mm");
assert(abs(tilt) <= 45, "tilt: at most 45 degrees either way");
assert(reach >= block / 2 + plate[0] / 2, "reach: too short for the camera plate");
assert(piece_len > socket_depth + 10, "post pieces too short: fewer post_pieces");
assert(post_pieces >= 1 && post_pieces <= 4, "post_pieces: 1 to 4");
assert(plate_t - nut_depth >= 2, "plate_t: leave at least 2 mm of plate under the nuts");

// ---- parts -----------------------------------------------------------------------------------

// One piece of the post: a square bar of length `len` with M3 cross holes `socket_depth / 2`
// from each end (for the arm, the foot or a coupler).
module bar(len, bottom_hole = true, top_hole = true) {
    difference() {
        translate([-post / 2, -post / 2, 0]) cube([post, post, len]);
        for (z = [bottom_hole ? socket_depth / 2 : -100, top_hole ? len - socket_depth / 2 : -100])
            translate([0, 0, z]) rotate([0, 90, 0]) cylinder(d = m3_hole, h = post + 2, center = true);
    }
}

// The bottom piece of the post, its seat at z = 0 (the wall top edge or the foot's socket floor).
module post_part() {
    bar(piece_len, bottom_hole = base == "foot");
    if (base == "clip") clip();
}

// The other pieces of the post (all the same).
module post_extension_part() { bar(piece_len); }

// Joins two post pieces end to end.
module coupler_part() {
    len = 2 * socket_depth;
    difference() {
        translate([-block / 2, -block / 2, 0]) cube([block, block, len]);
        translate([-sock / 2, -sock / 2, -1]) cube([sock, sock, len + 2]);
        for (z = [socket_depth / 2, len - socket_depth / 2])
            translate([0, 0, z]) rotate([0, 90, 0]) cylinder(d = m3_hole, h = block + 2, center = true);
    }
}

// U clip below z = 0, straddling a wall that runs along y; the post sits on top of it, flush
// with the clip's -y face so the post piece prints lying on that face without supports.
module clip() {
    gap = wall_thickness + wall_clearance;
    leg = 3;
    outer = gap + 2 * leg;
    w = max(clip_width, post);
    y0 = -post / 2;
    difference() {
        translate([-outer / 2, y0, -clip_depth]) cube([outer, w, clip_depth + eps]);
        translate([-gap / 2, y0 - 1, -clip_depth - 1]) cube([gap, w + 2, clip_depth + 1]);
    }
    // a cap under the post, as wide as the post or the clip
    translate([-max(outer, post) / 2, y0, -3]) cube([max(outer, post), w, 3 + eps]);
    // small grip ridges inside the legs
    for (s = [-1, 1])
        translate([s * gap / 2, y0 + w / 2, -clip_depth + 4])
            rotate([90, 0, 0]) cylinder(d = 1.2, h = w, center = true, $fn = 12);
}

// Foot: a plate with a socket for the post; socket floor at z = 0.
module foot_part() {
    ft = 5;
    difference() {
        union() {
            translate([-foot_size[0] / 2, -foot_size[1] / 2, -ft]) cube([foot_size[0], foot_size[1], ft]);
            translate([-block / 2, -block / 2, -eps]) cube([block, block, socket_depth]);
            // gussets
            for (a = [0, 90, 180, 270]) rotate([0, 0, a])
                hull() {
                    translate([block / 2 - eps, -2, 0]) cube([eps, 4, socket_depth * 0.8]);
                    translate([min(foot_size[0], foot_size[1]) / 2 - 4, -2, 0]) cube([eps, 4, eps]);
                }
        }
        translate([-sock / 2, -sock / 2, 0]) cube([sock, sock, socket_depth + 1]);
        translate([0, 0, socket_depth / 2]) rotate([0, 90, 0])
            cylinder(d = m3_hole, h = block + 2, center = true);
        // screw holes to fix the foot to a board, if wanted
        for (x = [-1, 1], y = [-1, 1])
            translate([x * (foot_size[0] / 2 - 8), y * (foot_size[1] / 2 - 8), -ft - 1])
                cylinder(d = 4, h = ft + 2);
    }
}

// Camera plate in its own frame: top face at z = 0, centred on the origin; the board hangs
// below on standoffs, lens down. The ribbon connector is at the board's bottom edge (-y, away
// from the post when the arm points along +x... rotated below so the cable runs to the post).
module camera_plate() {
    holes = hole_centres();
    difference() {
        union() {
            translate([0, 0, -plate_t]) plate_outline(plate_t);
            for (h = holes) translate([h[0], h[1], -plate_t - standoff + eps])
                cylinder(d = 5, h = standoff);
        }
        for (h = holes) {
            translate([h[0], h[1], -plate_t - standoff - 1]) cylinder(d = m2_hole, h = standoff + plate_t + 2);
            // hex nut traps in the top face (the shafts in arm_part lead down to them)
            translate([h[0], h[1], -nut_depth]) cylinder(d = m2_nut / cos(30), h = nut_depth + eps, $fn = 6);
        }
    }
}

// The M2 hole centres and the plate's outline, in the camera plate's frame.
function hole_centres() = [for (i = [-1, 1], j = [-1, 1]) [i * hole_spacing[0] / 2, j * hole_spacing[1] / 2]];
board_shift = board[1] / 2 - hole_inset - hole_spacing[1] / 2;  // holes 2 mm from the top edge
module plate_outline(h) {
    translate([-plate[0] / 2, -plate[1] / 2 + board_shift, 0]) rounded_box([plate[0], plate[1], h], 2);
}

module rounded_box(size, r) {
    hull() for (x = [r, size[0] - r], y = [r, size[1] - r])
        translate([x, y, 0]) cylinder(r = r, h = size[2]);
}

// The arm in assembly position: the socket block around the post top (post axis = z axis),
// the bar along +x, the camera plate under the far end, tilted by `tilt`.
module arm_part() {
    plate_z = arm_top - arm_t - plate_drop;   // top of the plate at tilt 0
    difference() {
        union() {
            // socket block
            translate([-block / 2, -block / 2, arm_top - roof - socket_depth])
                cube([block, block, socket_depth + roof]);
            // bar
            translate([0, -arm_w / 2, arm_top - arm_t]) cube([reach + plate[0] / 2, arm_w, arm_t]);
            // wedge from the whole bar section down to the whole (tilted) plate: printed upside
            // down, its sides slope outwards at under 45 degrees, so the plate needs no support
            hull() {
                translate([reach - plate[0] / 2, -arm_w / 2, arm_top - arm_t])
                    cube([plate[0], arm_w, arm_t]);
                translate([reach, 0, plate_z]) rotate([0, -tilt, 0]) rotate([0, 0, 90])
                    plate_outline(eps);
            }
            translate([reach, 0, plate_z]) rotate([0, -tilt, 0]) rotate([0, 0, 90]) camera_plate();
        }
        // socket for the post
        translate([-sock / 2, -sock / 2, arm_top - roof - socket_depth - 1])
            cube([sock, sock, socket_depth + 1]);
        // M3 cross pin
        translate([0, 0, arm_top - roof - socket_depth / 2]) rotate([0, 90, 0])
            cylinder(d = m3_hole, h = block + 2, center = true);
        // hex shafts from the arm's top face down to the nut traps: the nuts drop in from
        // above and the traps keep them from turning; the plate under them stays whole
        translate([reach, 0, plate_z]) rotate([0, -tilt, 0]) rotate([0, 0, 90])
            for (h = hole_centres())
                translate([h[0], h[1], 0])
                    cylinder(d = m2_nut / cos(30), h = arm_t + plate_drop + 40, $fn = 6);
    }
}

// A flat stand-in for the tray and the board, for the assembly preview only.
module preview_extras() {
    %translate([15, -80, 0]) cube([100, 160, 1]);            // tray floor, 10 x 16 cm
    %translate([reach, 0, camera_height]) rotate([0, -tilt, 0])
        translate([-board[1] / 2, -board[0] / 2, -board_and_lens]) cube([board[1], board[0], 1]);
}

// ---- output ---------------------------------------------------------------------------------

if (part == "assembly") {
    color("SteelBlue") translate([0, 0, base_level]) post_part();
    if (post_pieces > 1) for (i = [1 : post_pieces - 1]) {
        color("LightSteelBlue") translate([0, 0, base_level + i * piece_len]) post_extension_part();
        color("Gray") translate([0, 0, base_level + i * piece_len - socket_depth]) coupler_part();
    }
    color("Orange") arm_part();
    if (base == "foot") color("Gray") translate([0, 0, base_level]) foot_part();
    preview_extras();
} else if (part == "post") {
    // lying on its side: the clip's U profile flat on the bed, no supports
    translate([0, 0, post / 2]) rotate([90, 0, 0]) post_part();
} else if (part == "post_extension") {
    translate([0, 0, post / 2]) rotate([90, 0, 0]) post_extension_part();
} else if (part == "coupler") {
    coupler_part();
} else if (part == "arm") {
    // upside down: the arm's top face on the bed, socket opening and camera plate facing up
    translate([0, 0, arm_top]) rotate([180, 0, 0]) arm_part();
} else if (part == "foot") {
    translate([0, 0, 5]) foot_part();
} else if (part != "none") {  // none: for files that include this one
    assert(false, str("unknown part \"", part, "\": use assembly, post, post_extension, coupler, arm or foot"));
}
