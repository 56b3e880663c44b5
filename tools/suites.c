/* Built-in layer suites. Shapes follow the published architectures; counts are how many convs
 * of the network have that exact shape, so a suite's time is sum(median * count). */
#include "suites.h"

#include <stddef.h>
#include <string.h>

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* IResNet-34 (arcface backbone) at 112x112: 3x3 s1 stem, four stages of basic blocks
 * (3, 4, 6, 3), every stage starts with a stride-2 3x3 and a stride-2 1x1 shortcut. */
static const suite_layer resnet34_112[] = {
    {"mb1ic3ih112oc64kh3ph1n\"stem\"", 1},
    {"mb1ic64ih112oc64kh3ph1n\"s1.conv1.first\"", 1},
    {"mb1ic64ih112oc64oh56kh3sh2ph1n\"s1.conv2.down\"", 1},
    {"mb1ic64ih112oc64oh56kh1sh2ph0n\"s1.shortcut\"", 1},
    {"mb1ic64ih56oc64kh3ph1n\"s1.conv\"", 4},
    {"mb1ic64ih56oc128kh3ph1n\"s2.conv1.first\"", 1},
    {"mb1ic128ih56oc128oh28kh3sh2ph1n\"s2.conv2.down\"", 1},
    {"mb1ic64ih56oc128oh28kh1sh2ph0n\"s2.shortcut\"", 1},
    {"mb1ic128ih28oc128kh3ph1n\"s2.conv\"", 6},
    {"mb1ic128ih28oc256kh3ph1n\"s3.conv1.first\"", 1},
    {"mb1ic256ih28oc256oh14kh3sh2ph1n\"s3.conv2.down\"", 1},
    {"mb1ic128ih28oc256oh14kh1sh2ph0n\"s3.shortcut\"", 1},
    {"mb1ic256ih14oc256kh3ph1n\"s3.conv\"", 10},
    {"mb1ic256ih14oc512kh3ph1n\"s4.conv1.first\"", 1},
    {"mb1ic512ih14oc512oh7kh3sh2ph1n\"s4.conv2.down\"", 1},
    {"mb1ic256ih14oc512oh7kh1sh2ph0n\"s4.shortcut\"", 1},
    {"mb1ic512ih7oc512kh3ph1n\"s4.conv\"", 4},
};

/* ResNet-50 v1 at 224 (stride on the first 1x1 of each downsampling block, as in benchdnn's list). */
static const suite_layer resnet50[] = {
    {"mb1ic3ih224oc64oh112kh7sh2ph3n\"conv1\"", 1},
    {"mb1ic64ih56oc256kh1ph0n\"c2.expand+shortcut\"", 4},
    {"mb1ic64ih56oc64kh1ph0n\"c2.reduce.first\"", 1},
    {"mb1ic64ih56oc64kh3ph1n\"c2.3x3\"", 3},
    {"mb1ic256ih56oc64kh1ph0n\"c2.reduce\"", 2},
    {"mb1ic256ih56oc512oh28kh1sh2ph0n\"c3.shortcut\"", 1},
    {"mb1ic256ih56oc128oh28kh1sh2ph0n\"c3.reduce.first\"", 1},
    {"mb1ic128ih28oc128kh3ph1n\"c3.3x3\"", 4},
    {"mb1ic128ih28oc512kh1ph0n\"c3.expand\"", 4},
    {"mb1ic512ih28oc128kh1ph0n\"c3.reduce\"", 3},
    {"mb1ic512ih28oc1024oh14kh1sh2ph0n\"c4.shortcut\"", 1},
    {"mb1ic512ih28oc256oh14kh1sh2ph0n\"c4.reduce.first\"", 1},
    {"mb1ic256ih14oc256kh3ph1n\"c4.3x3\"", 6},
    {"mb1ic256ih14oc1024kh1ph0n\"c4.expand\"", 6},
    {"mb1ic1024ih14oc256kh1ph0n\"c4.reduce\"", 5},
    {"mb1ic1024ih14oc2048oh7kh1sh2ph0n\"c5.shortcut\"", 1},
    {"mb1ic1024ih14oc512oh7kh1sh2ph0n\"c5.reduce.first\"", 1},
    {"mb1ic512ih7oc512kh3ph1n\"c5.3x3\"", 3},
    {"mb1ic512ih7oc2048kh1ph0n\"c5.expand\"", 3},
    {"mb1ic2048ih7oc512kh1ph0n\"c5.reduce\"", 2},
};

/* MobileNetV2 1.0 at 224: inverted residual blocks (1x1 expand, 3x3 depthwise, 1x1 project). */
static const suite_layer mobilenetv2[] = {
    {"mb1ic3ih224oc32oh112kh3sh2ph1n\"stem\"", 1},
    {"g32mb1ic32ih112oc32kh3ph1n\"b1.dw\"", 1},
    {"mb1ic32ih112oc16kh1ph0n\"b1.project\"", 1},
    {"mb1ic16ih112oc96kh1ph0n\"b2.expand\"", 1},
    {"g96mb1ic96ih112oc96oh56kh3sh2ph1n\"b2.dw.s2\"", 1},
    {"mb1ic96ih56oc24kh1ph0n\"b2.project\"", 1},
    {"mb1ic24ih56oc144kh1ph0n\"b3.expand\"", 2},
    {"g144mb1ic144ih56oc144kh3ph1n\"b3.dw\"", 1},
    {"mb1ic144ih56oc24kh1ph0n\"b3.project\"", 1},
    {"g144mb1ic144ih56oc144oh28kh3sh2ph1n\"b4.dw.s2\"", 1},
    {"mb1ic144ih28oc32kh1ph0n\"b4.project\"", 1},
    {"mb1ic32ih28oc192kh1ph0n\"b5.expand\"", 3},
    {"g192mb1ic192ih28oc192kh3ph1n\"b5.dw\"", 2},
    {"mb1ic192ih28oc32kh1ph0n\"b5.project\"", 2},
    {"g192mb1ic192ih28oc192oh14kh3sh2ph1n\"b7.dw.s2\"", 1},
    {"mb1ic192ih14oc64kh1ph0n\"b7.project\"", 1},
    {"mb1ic64ih14oc384kh1ph0n\"b8.expand\"", 4},
    {"g384mb1ic384ih14oc384kh3ph1n\"b8.dw\"", 4},
    {"mb1ic384ih14oc64kh1ph0n\"b8.project\"", 3},
    {"mb1ic384ih14oc96kh1ph0n\"b11.project\"", 1},
    {"mb1ic96ih14oc576kh1ph0n\"b12.expand\"", 3},
    {"g576mb1ic576ih14oc576kh3ph1n\"b12.dw\"", 2},
    {"mb1ic576ih14oc96kh1ph0n\"b12.project\"", 2},
    {"g576mb1ic576ih14oc576oh7kh3sh2ph1n\"b14.dw.s2\"", 1},
    {"mb1ic576ih7oc160kh1ph0n\"b14.project\"", 1},
    {"mb1ic160ih7oc960kh1ph0n\"b15.expand\"", 3},
    {"g960mb1ic960ih7oc960kh3ph1n\"b15.dw\"", 3},
    {"mb1ic960ih7oc160kh1ph0n\"b15.project\"", 2},
    {"mb1ic960ih7oc320kh1ph0n\"b17.project\"", 1},
    {"mb1ic320ih7oc1280kh1ph0n\"head\"", 1},
};

/* PP-OCR-like text detection at 640x640, not one exact model: a ResNet-ish backbone with a few
 * MobileNetV3-style depthwise layers, FPN 1x1 laterals and 3x3 smoothing, the large-kernel PAN's
 * 9x9 256-channel convs (the shapes of ORT issue #27633) and a DB head. */
static const suite_layer ocr_det[] = {
    {"mb1ic3ih640oc32oh320kh3sh2ph1n\"stem1\"", 1},
    {"mb1ic32ih320oc32kh3ph1n\"stem2\"", 1},
    {"mb1ic32ih320oc64kh3ph1n\"stem3\"", 1},
    {"mb1ic64ih160oc64kh3ph1n\"s1.conv\"", 4},
    {"mb1ic64ih160oc128oh80kh3sh2ph1n\"s2.down\"", 1},
    {"mb1ic64ih160oc128oh80kh1sh2ph0n\"s2.shortcut\"", 1},
    {"mb1ic128ih80oc128kh3ph1n\"s2.conv\"", 3},
    {"g128mb1ic128ih80oc128kh5ph2n\"s2.dw5x5\"", 1},
    {"mb1ic128ih80oc256oh40kh3sh2ph1n\"s3.down\"", 1},
    {"mb1ic128ih80oc256oh40kh1sh2ph0n\"s3.shortcut\"", 1},
    {"mb1ic256ih40oc256kh3ph1n\"s3.conv\"", 3},
    {"g256mb1ic256ih40oc256kh3ph1n\"s3.dw3x3\"", 1},
    {"mb1ic256ih40oc512oh20kh3sh2ph1n\"s4.down\"", 1},
    {"mb1ic256ih40oc512oh20kh1sh2ph0n\"s4.shortcut\"", 1},
    {"mb1ic512ih20oc512kh3ph1n\"s4.conv\"", 3},
    {"mb1ic64ih160oc256kh1ph0n\"fpn.lat160\"", 1},
    {"mb1ic128ih80oc256kh1ph0n\"fpn.lat80\"", 1},
    {"mb1ic256ih40oc256kh1ph0n\"fpn.lat40\"", 1},
    {"mb1ic512ih20oc256kh1ph0n\"fpn.lat20\"", 1},
    {"mb1ic256ih160oc256kh9ph4n\"lkpan.9x9@160\"", 1},
    {"mb1ic256ih80oc256kh9ph4n\"lkpan.9x9@80\"", 1},
    {"mb1ic256ih40oc256kh9ph4n\"lkpan.9x9@40\"", 1},
    {"mb1ic256ih20oc256kh9ph4n\"lkpan.9x9@20\"", 1},
    {"mb1ic256ih160oc64kh3ph1n\"fpn.smooth160+db.head\"", 3},
    {"mb1ic256ih80oc64kh3ph1n\"fpn.smooth80\"", 1},
    {"mb1ic256ih40oc64kh3ph1n\"fpn.smooth40\"", 1},
    {"mb1ic256ih20oc64kh3ph1n\"fpn.smooth20\"", 1},
};

static const suite suites[] = {
    {"resnet34-112", "arcface IResNet-34, 112x112 input", resnet34_112, N(resnet34_112)},
    {"resnet50", "ResNet-50 v1, 224x224 input", resnet50, N(resnet50)},
    {"mobilenetv2", "MobileNetV2 1.0, 224x224 input", mobilenetv2, N(mobilenetv2)},
    {"ocr-det", "PP-OCR-like text detection, 640x640 input", ocr_det, N(ocr_det)},
};

const suite *suite_find(const char *name) {
  for (int i = 0; i < N(suites); i++)
    if (name && strcmp(name, suites[i].name) == 0) return &suites[i];
  return NULL;
}

const suite *suite_at(int i) { return i >= 0 && i < N(suites) ? &suites[i] : NULL; }
